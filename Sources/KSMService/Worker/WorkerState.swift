import Kafka

/// The worker's shared mutable state: the bounded job queue, the offset tracker, and whether the
/// consumer is paused for backpressure. An actor, so the reader and the batch loops never race.
actor WorkerState {
    private var queue: [KafkaMessage] = []
    private var head = 0
    private var waiters: [CheckedContinuation<[KafkaMessage]?, Never>] = []
    private var waiterLimits: [Int] = []
    private var isFinished = false
    private var tracker = OffsetTracker()
    private(set) var isPaused = false
    let maximumInFlight: Int

    init(maximumInFlight: Int) { self.maximumInFlight = maximumInFlight }

    private var queued: Int { queue.count - head }

    /// Adds received messages, in order. Returns true when the caller should pause the consumer.
    func enqueue(_ messages: [KafkaMessage]) -> Bool {
        for message in messages { tracker.received(message.topicPartition, offset: message.offset) }
        queue.append(contentsOf: messages)
        while !waiters.isEmpty, queued > 0 {
            let waiter = waiters.removeFirst()
            let limit = waiterLimits.removeFirst()
            waiter.resume(returning: take(limit))
        }
        if !isPaused, tracker.inFlightCount >= maximumInFlight {
            isPaused = true
            return true
        }
        return false
    }

    /// The next batch of at most `limit` messages: all that are queued, waiting for one if none is.
    /// Nil once the worker is finishing and the queue is empty.
    func nextBatch(limit: Int) async -> [KafkaMessage]? {
        if queued > 0 { return take(limit) }
        if isFinished { return nil }
        return await withCheckedContinuation { continuation in
            waiters.append(continuation)
            waiterLimits.append(limit)
        }
    }

    private func take(_ limit: Int) -> [KafkaMessage] {
        let end = min(queue.count, head + limit)
        let batch = Array(queue[head..<end])
        head = end
        if head > 4096, head * 2 > queue.count {
            queue.removeFirst(head)
            head = 0
        }
        return batch
    }

    /// No more messages will come: batch loops drain the queue and end.
    func finish() {
        isFinished = true
        for waiter in waiters { waiter.resume(returning: nil) }
        waiters.removeAll()
        waiterLimits.removeAll()
    }

    /// Drops queued messages of revoked partitions and forgets their offsets; the new owner redoes them.
    func revoke(_ partitions: [TopicPartition]) {
        let revoked = Set(partitions)
        let kept = queue[head...].filter { !revoked.contains($0.topicPartition) }
        queue = Array(kept)
        head = 0
        tracker.revoke(partitions)
    }

    /// Marks messages finished (their replies delivered); returns, per partition that moved, the
    /// offset to store.
    func finished(_ messages: [KafkaMessage]) -> [TopicPartition: Int64] {
        var store: [TopicPartition: Int64] = [:]
        for message in messages {
            if let offset = tracker.finished(message.topicPartition, offset: message.offset) {
                store[message.topicPartition] = max(offset, store[message.topicPartition] ?? offset)
            }
        }
        return store
    }

    /// True (once) when a paused consumer has drained below half its in-flight limit.
    func shouldResume() -> Bool {
        guard isPaused, tracker.inFlightCount <= maximumInFlight / 2 else { return false }
        isPaused = false
        return true
    }

    var inFlight: Int { tracker.inFlightCount }
}
