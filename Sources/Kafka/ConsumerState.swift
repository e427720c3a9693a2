import OwnedThreads
import Synchronization

/// What the poll thread, the events iterator and API calls share: the `ConsumerStateMachine` under one
/// Mutex, plus the stop flag the threads read without locking and the watchdog.
///
/// Every method runs one transition under the lock and performs the action it returns after
/// releasing it, so continuations are never resumed and librdkafka never called with the lock held.
final class ConsumerState: Sendable {
    private let machine: Mutex<ConsumerStateMachine>
    /// Held across each pause or resume decision and its librdkafka call, so the calls reach librdkafka
    /// in the order they were decided: a backpressure resume decided before a user's pause cannot undo
    /// it. Taken before `machine`, never while holding it.
    private let fetchControl = Mutex(())
    let stop = StopFlag()
    let watchdog: KafkaConsumer.Watchdog?

    convenience init(capacity: Int, watchdog: KafkaConsumer.Watchdog?) {
        self.init(machine: ConsumerStateMachine(capacity: capacity), watchdog: watchdog)
    }

    /// Starts from a given machine (tests start from a state librdkafka would have to produce).
    init(machine: ConsumerStateMachine, watchdog: KafkaConsumer.Watchdog?) {
        self.machine = Mutex(machine)
        self.watchdog = watchdog
    }

    // MARK: consumer side

    func next() async -> KafkaConsumer.Event? {
        let event: KafkaConsumer.Event? = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: ConsumerStateMachine.EventWaiter) in
                let action = machine.withLock { $0.next(continuation, isCancelled: Task.isCancelled) }
                switch action {
                case .deliver(let event): continuation.resume(returning: event)
                case .end: continuation.resume(returning: nil)
                case .suspend: break
                }
            }
        } onCancel: {
            machine.withLock { $0.cancelNext() }?.resume(returning: nil)
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
        let more = machine.withLock { $0.takeMore(limit: limit - 1) }
        if let watchdog {
            for case .message(let message) in more { watchdog.messageDelivered(message.topicPartition, offset: message.offset) }
        }
        return [first] + more
    }

    /// The explicit form of the acknowledgement `next()` makes: the worker is done with the handed-out
    /// `.revoked`. Returns whether a revocation was waiting for it.
    @discardableResult
    func acknowledgeRevocation() -> Bool {
        machine.withLock { $0.acknowledgeRevocation() }
    }

    /// Suspends until the poll thread finished (returns at once if it has).
    func waitUntilFinished() async {
        await withCheckedContinuation { (continuation: ConsumerStateMachine.CloseWaiter) in
            let action = machine.withLock { $0.waitUntilFinished(continuation) }
            if action == .resumeNow { continuation.resume() }
        }
    }

    /// ``waitUntilFinished()``, at most `timeout`; true if it finished. The wait that loses the race
    /// stays parked (a suspended task, no thread) until the poll thread finishes, if it ever does: the
    /// poll thread may sit in librdkafka for ever, leaving a group whose coordinator is gone.
    func waitUntilFinished(timeout: Duration) async -> Bool {
        await BoundedWait.result(within: timeout) { await self.waitUntilFinished() } != nil
    }

    /// Runs a pause or resume transition and makes its librdkafka call, in decision order (see
    /// `fetchControl`); `refused`, if given, records the partitions librdkafka refused before the
    /// next decision. Returns them (``setPaused(_:_:paused:)``); throws when the call itself failed.
    @discardableResult
    func changeFetching(
        _ rk: OpaquePointer, _ transition: (inout ConsumerStateMachine) -> ConsumerStateMachine.FetchAction,
        refused record: ((inout ConsumerStateMachine, [TopicPartition]) -> Void)? = nil
    ) throws(KafkaError) -> [TopicPartition: KafkaError] {
        try fetchControl.withLock { (_) throws(KafkaError) -> [TopicPartition: KafkaError] in
            let refused: [TopicPartition: KafkaError]
            switch machine.withLock({ transition(&$0) }) {
            case .pause(let partitions): refused = try setPaused(rk, partitions, paused: true)
            case .resume(let partitions): refused = try setPaused(rk, partitions, paused: false)
            case .unchanged: refused = [:]
            }
            if let record, !refused.isEmpty { machine.withLock { record(&$0, Array(refused.keys)) } }
            return refused
        }
    }

    // MARK: poll-thread side

    /// Appends an event, handing it straight to a waiting iterator.
    func enqueue(_ event: KafkaConsumer.Event) {
        machine.withLock { $0.enqueue(event) }.perform()
    }

    /// Records a revoke and delivers `.revoked`; returns whether the callback must wait for the
    /// acknowledgement (``revocationWait(deadlinePassed:)``) before unassigning.
    func revocationStarted(_ partitions: [TopicPartition]) -> Bool {
        let action = machine.withLock { $0.revocationStarted(partitions) }
        action.delivery.perform()
        if case .awaitAcknowledgement = action { return true }
        return false
    }

    func revocationWait(deadlinePassed: Bool) -> ConsumerStateMachine.RevocationWaitAction {
        machine.withLock { $0.revocationWait(deadlinePassed: deadlinePassed) }
    }

    func assignmentLost() {
        machine.withLock { $0.assignmentLost() }
    }

    func beginClosing() -> ConsumerStateMachine.CloseAction {
        machine.withLock { $0.beginClosing() }
    }

    /// Ends the sequence and wakes `close()` callers.
    func finish() {
        machine.withLock { $0.finish() }.perform()
    }

    var hasJoined: Bool { machine.withLock { $0.hasJoined } }
    var isLeaving: Bool { machine.withLock { $0.isLeaving } }
    var isHoldingBack: Bool { machine.withLock { $0.fetching == .heldBack } }
    var partitionsToSample: [TopicPartition] { machine.withLock { $0.partitionsToSample } }
    func recordLag(_ sample: [TopicPartition: Int64]) { machine.withLock { $0.recordLag(sample) } }
    var lag: [TopicPartition: Int64] { machine.withLock { $0.lag } }
    var bufferedMessages: Int { machine.withLock { $0.bufferedMessages } }
}
