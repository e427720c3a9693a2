import Kafka
import Logging

/// The publish stage: sends a batch's answers and waits for their delivery reports, round after
/// round (``PublishRound`` decides each), until every one settled or the task is cancelled.
///
/// Retriable failures are sent again with capped exponential backoff for as long as it takes;
/// fallbacks go at once. Cancellation (shutdown out of time) stops it: what is not delivered then is
/// not settled and is redelivered to the partition's next owner (at-least-once).
struct ReplyPublisher: Sendable {
    let producer: KafkaProducer
    let routing: ReplyRouting
    let statistics: WorkerStatistics
    let logger: Logger
    /// The wait after the first round with a retriable failure, doubled each round up to
    /// ``maximumBackoff``. Default: 50 ms.
    var firstBackoff = Duration.milliseconds(50)
    /// Default: 2 s.
    var maximumBackoff = Duration.seconds(2)

    /// Publishes `pending` and hands each round's settled messages to `settled` as soon as their
    /// reports are in, so a record that keeps failing holds back no other record's offset. Returns how
    /// many settled in all.
    @discardableResult
    func publish(_ pending: [PendingReply], settled: (_ messages: [KafkaMessage]) async -> Void) async -> Int {
        var remaining = pending
        var total = 0
        var delay = firstBackoff
        while !remaining.isEmpty {
            let results = await producer.send(remaining.map { routing.record($0.outcome, for: $0.message, span: $0.span) })
            let deliveredAt = ContinuousClock.now
            let round = PublishRound(judging: remaining, results: results)
            perform(round, deliveredAt: deliveredAt)
            if !round.settled.isEmpty { await settled(round.settled) }
            total += round.settled.count
            remaining = round.again
            if remaining.isEmpty || Task.isCancelled { break }
            // Only fallbacks left: send them now; a retriable failure waits with backoff first.
            guard let error = round.retriableError else { continue }
            logger.warning("publish failed; retrying", metadata: ["error": "\(error)", "records": "\(remaining.count)"])
            try? await Task.sleep(for: delay)
            if Task.isCancelled { break }
            delay = min(delay * 2, maximumBackoff)
        }
        return total
    }

    /// The round's side effects: span events, log lines, and the counters in one lock.
    private func perform(_ round: PublishRound, deliveredAt: ContinuousClock.Instant) {
        for job in round.delivered { job.span?.addEvent("published") }
        for (job, error) in round.fellBack {
            logger.warning(
                "publish refused for good; sending a headers-only dead letter instead",
                metadata: ["error": "\(error)", "source": "\(job.message.topic)/\(job.message.partition)/\(job.message.offset)"])
        }
        for (job, error) in round.dropped {
            // Even the smallest record was refused: nothing more can be published for it.
            logger.error(
                "dead letter refused for good; message dropped",
                metadata: [
                    "error": "\(error)", "source": "\(job.message.topic)/\(job.message.partition)/\(job.message.offset)",
                    "bytes": "\(job.message.value.count)",
                ])
        }
        statistics.update { round.count(into: &$0, deliveredAt: deliveredAt) }
    }
}
