import Kafka
import Logging
import OwnedThreads
import ServiceLifecycle

/// The read stage: takes the consumer's events, a batch per wake-up, until graceful shutdown;
/// queues messages with ``WorkerState`` (which pauses request topics whose room is used up) and
/// follows assignments and revocations.
struct JobReader: Sendable {
    let consumer: KafkaConsumer
    let state: WorkerState
    let statistics: WorkerStatistics
    let logger: Logger
    /// Events taken per wake-up at most.
    let eventLimit: Int

    /// Returns once graceful shutdown was triggered or the consumer ended, with every task it started done.
    func run() async {
        await withDiscardingTaskGroup { group in
            // This loop wakes only for consumer events, and a paused worker may get none: switches
            // librdkafka did not take are made again on a clock of their own.
            group.addTask { await state.keepFetchSwitchesMade() }
            for await events in consumer.eventBatches(limit: eventLimit).cancelOnGracefulShutdown() {
                var messages: [KafkaMessage] = []
                for event in events {
                    if case .message(let message) = event {
                        messages.append(message)
                        continue
                    }
                    // Keep the order: messages before a rebalance event are queued before it is handled.
                    await enqueue(messages)
                    messages.removeAll()
                    await handle(event, in: &group)
                }
                await enqueue(messages)
            }
            group.cancelAll()
        }
    }

    private func enqueue(_ messages: [KafkaMessage]) async {
        if messages.isEmpty { return }
        statistics.update { $0.received += messages.count }
        await state.enqueue(messages)
    }

    private func handle(_ event: KafkaConsumer.Event, in group: inout DiscardingTaskGroup) async {
        switch event {
        case .message: break
        case .assigned(let partitions):
            // The log ends at assignment tell first deliveries apart (their admission needs no
            // stored-reply lookup); asked off the read loop, and until they come nothing is assumed.
            let generations = await state.assigned(partitions)
            let (consumer, state) = (self.consumer, self.state)
            group.addTask {
                // Each partition's query blocks a thread up to its timeout; at shutdown (this task
                // cancelled) the answer is not waited for: it would only be dropped.
                let timeout = Duration.seconds(2)
                let budget = timeout * partitions.count + .seconds(1)
                guard let ends = await BoundedWait.result(within: budget, of: { await consumer.logEndOffsets(partitions, timeout: timeout) }) else { return }
                await state.recordLogEnds(ends, generations: generations)
            }
            let owned = (try? consumer.assignment().count) ?? partitions.count
            statistics.update {
                $0.assignedPartitions = owned
                $0.partitionChanges += 1
            }
            logger.info("partitions assigned", metadata: ["partitions": "\(partitions.map { "\($0.topic)/\($0.partition)" })"])
        case .revoked(let partitions):
            // Finished jobs stored their offsets as they finished; queued ones are the new owner's.
            await state.revoke(partitions)
            let owned = (try? consumer.assignment().count).map { max(0, $0 - partitions.count) } ?? 0
            statistics.update {
                $0.assignedPartitions = owned
                $0.partitionChanges += 1
            }
            // Done with them: the rebalance may unassign now (asking for the next events would say the
            // same a moment later). After the count above, which still includes them.
            consumer.acknowledgeRevocation()
            logger.info("partitions revoked", metadata: ["partitions": "\(partitions.map { "\($0.topic)/\($0.partition)" })"])
        case .error(let error):
            statistics.update { $0.kafkaError("consumer", error.kind) }
            let level: Logger.Level = error.kind == .offsetReset || error.kind == .commitFailed ? .error : .warning
            logger.log(
                level: level, "kafka consumer error", metadata: ["error": "\(error)", "kind": "\(error.kind.rawValue)", "retriable": "\(error.isRetriable)"])
        }
    }
}
