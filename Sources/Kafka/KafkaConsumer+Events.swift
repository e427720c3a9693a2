extension KafkaConsumer {
    /// What the poll thread reports, in order (except `revoked`, which jumps the queue: see `Events`).
    public enum Event: Sendable {
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
    public struct Events: AsyncSequence, Sendable {
        public typealias Element = Event
        public typealias Failure = Never
        let state: ConsumerState

        public struct AsyncIterator: AsyncIteratorProtocol {
            let state: ConsumerState
            public mutating func next() async -> Event? {
                await state.next()
            }
        }

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(state: state)
        }
    }
}

extension KafkaConsumer {
    /// The consumer's events in batches of at most `limit` (see ``Events``): one wake-up of the reading
    /// task per batch rather than per message, for workers that batch anyway.
    public struct EventBatches: AsyncSequence, Sendable {
        public typealias Element = [Event]
        public typealias Failure = Never
        let state: ConsumerState
        let limit: Int

        public struct AsyncIterator: AsyncIteratorProtocol {
            let state: ConsumerState
            let limit: Int
            public mutating func next() async -> [Event]? {
                let batch = await state.nextBatch(limit: limit)
                return batch.isEmpty ? nil : batch
            }
        }

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(state: state, limit: Swift.max(1, limit))
        }
    }
}
