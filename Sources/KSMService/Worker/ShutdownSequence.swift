import Kafka
import Logging
import OwnedThreads

/// The end of a worker's run, bounded by its ``ShutdownPlan``: in-flight batches drain until the
/// plan's drain deadline, then the final commit, leaving the group and flushing the producer share
/// the reserve. What does not finish in time is left for redelivery (at-least-once).
struct ShutdownSequence: Sendable {
    let plan: ShutdownPlan
    let consumer: KafkaConsumer
    let producer: KafkaProducer
    let statistics: WorkerStatistics
    let logger: Logger

    /// Waits for `loops` batch loops of `group` (each returns true) until `deadline`; past it, they are
    /// cancelled: they stop retrying publishes, and their jobs are not stored as done.
    func drain(_ group: inout TaskGroup<Bool>, loops: Int, until deadline: ContinuousClock.Instant) async {
        group.addTask {
            try? await Task.sleep(until: deadline, clock: .continuous)
            return false
        }
        var running = loops
        while running > 0, let finished = await group.next() {
            if finished {
                running -= 1
                continue
            }
            logger.warning(
                "shutdown: in-flight work not finished in time; left for redelivery",
                metadata: ["timeout": "\(plan.timeout)", "inFlight": "\(statistics.snapshot.inFlight)"])
            group.cancelAll()
        }
        // Ends the timer when the loops finished first.
        group.cancelAll()
    }

    /// Commits, leaves the group and flushes the producer, all before `end`.
    func leave(by end: ContinuousClock.Instant) async {
        // The commit may retry until a second before the end; leaving and flushing share that second.
        await commit(before: end - .seconds(1))
        // Leaving the group can wait behind a rebalance the coordinator holds open (a JoinGroup held
        // until departed members' sessions time out): bounded, so the process exits inside the grace
        // period. The offsets were committed above; not waiting only means the group notices later.
        let consumer = self.consumer
        let left = await BoundedWait.result(within: plan.remaining(until: end - .milliseconds(300), atLeast: .milliseconds(200))) {
            await consumer.close()
        }
        if left == nil {
            logger.warning("shutdown: leaving the consumer group did not finish in time; exiting anyway (offsets were committed)")
        }
        let flush = plan.remaining(until: end, atLeast: .milliseconds(200))
        let producer = self.producer
        _ = await BoundedWait.result(within: flush) { await producer.close(timeout: flush) }
    }

    /// The final commit, attempted as ``FinalCommitAttempts`` decides.
    private func commit(before end: ContinuousClock.Instant) async {
        var attempts = FinalCommitAttempts(end: end)
        let consumer = self.consumer
        while true {
            let limit = attempts.begin(now: .now)
            let result = await BoundedWait.result(within: limit) { () async -> Result<Void, KafkaError> in
                do throws(KafkaError) {
                    try await consumer.commit()
                    return .success(())
                } catch { return .failure(error) }
            }
            let outcome: FinalCommitAttempts.Outcome =
                switch result {
                case .success?: .committed
                case .failure(let error)?: .failed(error)
                case nil: .timedOut
                }
            let next = attempts.next(after: outcome, now: .now, cancelled: Task.isCancelled)
            if case .committed = outcome {
                logger.debug("final commit done", metadata: ["attempts": "\(attempts.attempts)"])
                statistics.update { $0.finalCommitSucceeded = true }
                return
            }
            statistics.update { $0.kafkaError("consumer", .commitFailed) }
            switch (next, outcome) {
            case (.retry(let wait), .failed(let error)):
                logger.info("final commit failed; retrying", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: wait)
            case (.retry, _):
                logger.info("final commit attempt timed out; retrying")
            case (_, .failed(let error)):
                logger.error("final commit failed; answered jobs since the last commit will be redelivered", metadata: ["error": "\(error)"])
                statistics.update { $0.finalCommitSucceeded = false }
                return
            default:
                logger.error("final commit did not finish in time; answered jobs since the last commit may be redelivered")
                statistics.update { $0.finalCommitSucceeded = false }
                return
            }
        }
    }
}
