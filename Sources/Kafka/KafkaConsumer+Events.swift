import DequeModule
import Synchronization

extension KafkaConsumer {
    /// What the poll thread reports, in order (except `revoked`, which jumps the queue: see `Events`).
    public enum Event: Sendable {
        case message(KafkaMessage)
        /// Partitions added to this member (incrementally, with cooperative-sticky).
        case assigned([TopicPartition])
        /// Partitions taken away. Buffered, not yet handed out messages of these partitions were dropped
        /// (the next owner gets them again); store offsets of finished jobs now, abandon the rest.
        /// The revocation completes when you ask for the next event, or after `revocationDeadline`.
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

/// State shared by the poll thread, the events iterator and API calls; all of it under one Mutex.
final class ConsumerState: Sendable {
    struct State {
        var events = Deque<KafkaConsumer.Event>()
        var bufferedMessages = 0
        var waiter: CheckedContinuation<KafkaConsumer.Event?, Never>?
        var finished = false
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        /// The poll thread waits in the rebalance callback while this is true.
        var awaitingRevocationAck = false
        /// A `.revoked` was handed out; the next `next()` acknowledges it.
        var revocationHandedOut = false
        var assignment: Set<TopicPartition> = []
        var userPaused: Set<TopicPartition> = []
        var autoPaused = false
        /// Set once the poll thread started leaving the group: revocations no longer wait.
        var closing = false
        /// Set by the first assign callback (even an empty one): the group's SyncGroup completed.
        var everAssigned = false
        /// Per assigned partition: messages the broker holds past this member's fetch position,
        /// sampled on the poll thread (see `KafkaConsumer.sampleLag`).
        var lag: [TopicPartition: Int64] = [:]
    }

    let state = Mutex(State())
    let stop = StopFlag()
    let capacity: Int
    let watchdog: KafkaConsumer.Watchdog?

    init(capacity: Int, watchdog: KafkaConsumer.Watchdog?) {
        self.capacity = max(capacity, 1)
        self.watchdog = watchdog
    }

    // MARK: consumer side

    func next() async -> KafkaConsumer.Event? {
        let event: KafkaConsumer.Event? = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<KafkaConsumer.Event?, Never>) in
                let immediate: KafkaConsumer.Event?? = state.withLock { s in
                    if s.revocationHandedOut {
                        s.revocationHandedOut = false
                        s.awaitingRevocationAck = false
                    }
                    if let event = Self.takeFirst(&s) { return .some(event) }
                    if s.finished || Task.isCancelled { return .some(nil) }
                    s.waiter = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            state.withLock { $0.waiter.take() }?.resume(returning: nil)
        }
        if case .message(let message) = event {
            watchdog?.messageDelivered(message.topicPartition, offset: message.offset)
        }
        return event
    }

    /// The next events, at least one and at most `limit`: what is buffered, waiting if nothing is.
    /// A `.revoked` ends a batch (it is acknowledged by the following call). Empty once finished.
    func nextBatch(limit: Int) async -> [KafkaConsumer.Event] {
        guard let first = await next() else { return [] }
        if case .revoked = first { return [first] }
        var batch = [first]
        let more: [KafkaConsumer.Event] = state.withLock { s in
            var taken: [KafkaConsumer.Event] = []
            while taken.count + 1 < limit, let event = Self.takeFirst(&s) {
                taken.append(event)
                if case .revoked = event { break }
            }
            return taken
        }
        if let watchdog {
            for case .message(let message) in more { watchdog.messageDelivered(message.topicPartition, offset: message.offset) }
        }
        batch.append(contentsOf: more)
        return batch
    }

    private static func takeFirst(_ s: inout State) -> KafkaConsumer.Event? {
        guard let event = s.events.popFirst() else { return nil }
        note(handingOut: event, &s)
        return event
    }

    private static func note(handingOut event: KafkaConsumer.Event, _ s: inout State) {
        switch event {
        case .message: s.bufferedMessages -= 1
        case .revoked: s.revocationHandedOut = true
        default: break
        }
    }

    // MARK: poll-thread side

    /// Appends (or, with `first`, prepends) an event, handing it straight to a waiting iterator.
    func enqueue(_ event: KafkaConsumer.Event, first: Bool = false) {
        let waiter: CheckedContinuation<KafkaConsumer.Event?, Never>? = state.withLock { s in
            if let waiter = s.waiter.take() {
                if case .revoked = event { s.revocationHandedOut = true }
                return waiter
            }
            if case .message = event { s.bufferedMessages += 1 }
            if first { s.events.prepend(event) } else { s.events.append(event) }
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// Ends the sequence and wakes `close()` callers.
    func finish() {
        let (waiter, closeWaiters) = state.withLock { s in
            s.finished = true
            s.awaitingRevocationAck = false
            defer { s.closeWaiters.removeAll() }
            return (s.waiter.take(), s.closeWaiters)
        }
        waiter?.resume(returning: nil)
        closeWaiters.forEach { $0.resume() }
    }

    func waitUntilFinished() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { s in
                if s.finished { return true }
                s.closeWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    var bufferedMessages: Int { state.withLock { $0.bufferedMessages } }
}
