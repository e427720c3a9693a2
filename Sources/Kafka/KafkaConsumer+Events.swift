extension KafkaConsumer {
    /// What the poll thread reports, in order (except `revoked`, which jumps the queue: see `Events`).
    package enum Event: Sendable {
        case message(KafkaMessage)
        /// Partitions added to this member (incrementally, with cooperative-sticky).
        case assigned([TopicPartition])
        /// Partitions taken away. Buffered, not yet handed out messages of these partitions were dropped
        /// (the next owner gets them again); store offsets of finished jobs now, abandon the rest.
        /// The revocation completes when you acknowledge it: by asking for the next event, or with
        /// `KafkaConsumer.acknowledgeRevocation()`; or after `revocationDeadline`.
        case revoked([TopicPartition])
        case error(KafkaError)
    }

    /// The consumer's events: a bounded buffer filled by the poll thread; iterate it from one task.
    ///
    /// Backpressure: once `eventBufferSize` messages wait here, the poll thread pauses the whole
    /// assignment (it keeps polling to serve rebalances) and resumes it when half drained. Ends after
    /// `close()` (or deinit) once the consumer left the group.
    package struct Events: AsyncSequence, Sendable {
        package typealias Element = Event
        package typealias Failure = Never
        let state: ConsumerState

        package struct AsyncIterator: AsyncIteratorProtocol {
            let state: ConsumerState
            package mutating func next() async -> Event? {
                await state.next()
            }
        }

        package func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(state: state)
        }
    }
}

extension KafkaConsumer {
    /// The consumer's events in batches of at most `limit` (see ``Events``): one wake-up of the reading
    /// task per batch rather than per message, for workers that batch anyway.
    package struct EventBatches: AsyncSequence, Sendable {
        package typealias Element = [Event]
        package typealias Failure = Never
        let state: ConsumerState
        let limit: Int

        package struct AsyncIterator: AsyncIteratorProtocol {
            let state: ConsumerState
            let limit: Int
            package mutating func next() async -> [Event]? {
                let batch = await state.nextBatch(limit: limit)
                return batch.isEmpty ? nil : batch
            }
        }

        package func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(state: state, limit: Swift.max(1, limit))
        }
    }
}
