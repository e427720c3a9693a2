import DequeModule

/// The consumer's lifecycle and rebalance handling as an explicit state machine.
///
/// One value, mutated only under `ConsumerState`'s Mutex. Each transition changes the value and
/// returns an action (resume a parked `next()`, pause or resume partitions, wait for a revocation's
/// acknowledgement, wake `close()`), which the caller performs after releasing the lock: no
/// continuation is resumed and no librdkafka call is made while the lock is held.
///
/// The lifecycle is ``state``; the waiters live in its cases, so a parked `next()` during a revocation
/// wait, or a waiting `close()` after the end, cannot be written down. The event buffer, assignment,
/// user pauses, backpressure and lag are plain fields next to it: data every state shares, not states.
///
/// ```
///  joining ──assign──▶ running ──revoke──▶ awaitingRevocationAck(.queued)
///     │                 ▲  ▲                 │                  │ .revoked handed out
///     │                 │  └──── deadline ───┘                  ▼
///     │                 └──── acknowledged, deadline ──── awaitingRevocationAck(.handedOut)
///     │                 │
///     └──beginClosing───┴──▶ closing ──finish──▶ finished
/// ```
/// A revoke with a `next()` parked hands `.revoked` over at once and goes straight to `.handedOut`;
/// `beginClosing` leaves any live state (joining, running, awaiting) for closing.
/// The transitions live in this file so that `private(set)` keeps them the only writers.
struct ConsumerStateMachine: Sendable {
    typealias Event = KafkaConsumer.Event
    /// A `next()` suspended until an event (or the end) arrives.
    typealias EventWaiter = CheckedContinuation<Event?, Never>
    /// A `close()` suspended until the poll thread finished.
    typealias CloseWaiter = CheckedContinuation<Void, Never>

    /// Where the consumer is in its life.
    enum State: Sendable {
        /// Subscribed, and no rebalance assigned anything yet (not even an empty set): librdkafka
        /// 2.0.2 aborts if such a member is destroyed (see `KafkaConsumer.pollLoop`).
        case joining(Waiters)
        /// A group member; a revoke waits for the worker's acknowledgement before unassigning.
        case running(Waiters)
        /// The poll thread waits inside the revoke callback until the worker acknowledges `.revoked`
        /// or the deadline passes. No `next()` is parked: `.revoked` is buffered or already handed out.
        case awaitingRevocationAck(RevocationEvent, closers: [CloseWaiter])
        /// The poll thread is leaving the group (`rd_kafka_consumer_close`): revokes do not wait.
        case closing(Waiters)
        /// The poll thread is done: buffered events still drain, then `next()` returns nil.
        case finished
    }

    /// Who waits on a live consumer: at most one `next()` (only while nothing is buffered, since any
    /// event goes straight to it) and any number of `close()` calls.
    struct Waiters: Sendable {
        var next: EventWaiter?
        var closers: [CloseWaiter] = []
    }

    /// Where the pending revocation's `.revoked` event is: only a handed-out one can be acknowledged.
    enum RevocationEvent: Sendable, Equatable {
        /// At the head of the buffer, not yet seen by the worker.
        case queued
        /// Given to the worker; its next `next()` (or `acknowledgeRevocation()`) acknowledges it.
        case handedOut
    }

    /// Whether backpressure holds fetching of the whole assignment.
    enum Fetching: Sendable, Equatable {
        case flowing
        case heldBack
    }

    private(set) var state: State = .joining(Waiters())
    private(set) var fetching = Fetching.flowing
    /// Events not handed out yet, oldest first (a `.revoked` jumps to the head).
    private(set) var buffer = Deque<Event>()
    /// The `.message` events in `buffer`: what backpressure counts.
    private(set) var bufferedMessages = 0
    private(set) var assignment: Set<TopicPartition> = []
    /// Paused with `KafkaConsumer.pause`; a backpressure resume leaves them paused.
    private(set) var userPaused: Set<TopicPartition> = []
    /// Per assigned partition: what the broker holds past this member's fetch position, last sampled.
    private(set) var lag: [TopicPartition: Int64] = [:]
    /// Buffered messages at which backpressure pauses fetching; it resumes at half.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
    }
}

// MARK: - The worker's side

extension ConsumerStateMachine {
    /// Acknowledges a handed-out `.revoked`: the revoke callback may unassign now. `next()` calls it
    /// first, so asking for the next event acknowledges (the implicit form). A `.revoked` still in the
    /// buffer cannot be acknowledged: the worker has not seen it. Returns whether one was acknowledged.
    @discardableResult
    mutating func acknowledgeRevocation() -> Bool {
        guard case .awaitingRevocationAck(.handedOut, let closers) = state else { return false }
        state = .running(Waiters(next: nil, closers: closers))
        return true
    }

    /// The iterator asks for an event: acknowledge a handed-out revocation, then hand out the oldest
    /// buffered event, or end, or park `waiter`. Only one iterator may wait at a time.
    mutating func next(_ waiter: EventWaiter, isCancelled: Bool) -> NextAction {
        acknowledgeRevocation()
        if let event = takeFirst() { return .deliver(event) }
        if isCancelled { return .end }
        switch state {
        case .joining(var waiters):
            waiters.next = waiter
            state = .joining(waiters)
        case .running(var waiters):
            waiters.next = waiter
            state = .running(waiters)
        case .closing(var waiters):
            waiters.next = waiter
            state = .closing(waiters)
        case .awaitingRevocationAck(_, let closers):
            // Not reached: a queued `.revoked` is in the buffer, a handed-out one was just acknowledged.
            // A revocation whose event is gone cannot be acknowledged, so it stops waiting.
            state = .running(Waiters(next: waiter, closers: closers))
        case .finished:
            return .end
        }
        return .suspend
    }

    /// More buffered events for a batch, at most `limit`, without waiting; stops after a `.revoked`
    /// (the following call acknowledges it).
    mutating func takeMore(limit: Int) -> [Event] {
        var taken: [Event] = []
        while taken.count < limit, let event = takeFirst() {
            taken.append(event)
            if case .revoked = event { break }
        }
        return taken
    }

    /// The iterating task was cancelled: the parked `next()`, if any, to resume with nil.
    mutating func cancelNext() -> EventWaiter? {
        takeParkedNext()
    }

    /// Waits for the end, unless already there.
    mutating func waitUntilFinished(_ closer: CloseWaiter) -> CloseWaitAction {
        switch state {
        case .joining(var waiters):
            waiters.closers.append(closer)
            state = .joining(waiters)
        case .running(var waiters):
            waiters.closers.append(closer)
            state = .running(waiters)
        case .closing(var waiters):
            waiters.closers.append(closer)
            state = .closing(waiters)
        case .awaitingRevocationAck(let event, var closers):
            closers.append(closer)
            state = .awaitingRevocationAck(event, closers: closers)
        case .finished:
            return .resumeNow
        }
        return .suspend
    }

    /// `KafkaConsumer.pause`: always pauses, and the partitions stay paused across backpressure resumes.
    mutating func pauseRequested(_ partitions: [TopicPartition]) -> FetchAction {
        userPaused.formUnion(partitions)
        return .pause(partitions)
    }

    /// librdkafka refused to pause these (it holds no state for them): they are not paused, so a
    /// backpressure resume need not leave them out. Kept, a partition refused before librdkafka
    /// knew it would stay out of every backpressure resume once assigned.
    mutating func pauseRefused(_ partitions: [TopicPartition]) {
        userPaused.subtract(partitions)
    }

    /// `KafkaConsumer.resume`: resumes unless backpressure holds the whole assignment (its own resume
    /// then includes these).
    mutating func resumeRequested(_ partitions: [TopicPartition]) -> FetchAction {
        userPaused.subtract(partitions)
        return fetching == .heldBack ? .unchanged : .resume(partitions)
    }
}

// MARK: - The poll thread's side

extension ConsumerStateMachine {
    /// A new message, error or assignment: straight to a parked `next()`, else at the end of the buffer.
    mutating func enqueue(_ event: Event) -> Delivery {
        if let waiter = takeParkedNext() { return .resume(waiter, event) }
        if case .message = event { bufferedMessages += 1 }
        buffer.append(event)
        return .buffered
    }

    /// The assign callback ran: the member has joined. New partitions start paused while backpressure
    /// holds fetching. `incremental` (cooperative) adds to the assignment, otherwise it replaces it.
    mutating func partitionsAssigned(_ partitions: [TopicPartition], incremental: Bool) -> FetchAction {
        if case .joining(let waiters) = state { state = .running(waiters) }
        if !incremental { assignment.removeAll() }
        assignment.formUnion(partitions)
        return fetching == .heldBack ? .pause(partitions) : .unchanged
    }

    /// A rebalance failed and the assignment was dropped.
    mutating func assignmentLost() {
        assignment.removeAll()
    }

    /// The revoke callback ran: forget the partitions, drop their buffered messages (the next owner
    /// reads them again), and deliver `.revoked` ahead of everything else. While running it then waits
    /// for the acknowledgement; closing does not wait, and neither does a revoke before any assignment
    /// (nothing was handed out that the worker could finish).
    mutating func revocationStarted(_ partitions: [TopicPartition]) -> RevocationAction {
        let revoked = Set(partitions)
        assignment.subtract(revoked)
        userPaused.subtract(revoked)
        let before = buffer.count
        buffer.removeAll { event in
            if case .message(let message) = event { return revoked.contains(message.topicPartition) }
            return false
        }
        bufferedMessages -= before - buffer.count

        let event = Event.revoked(partitions)
        switch state {
        case .running(var waiters):
            if let waiter = waiters.next.take() {
                state = .awaitingRevocationAck(.handedOut, closers: waiters.closers)
                return .awaitAcknowledgement(.resume(waiter, event))
            }
            buffer.prepend(event)
            state = .awaitingRevocationAck(.queued, closers: waiters.closers)
            return .awaitAcknowledgement(.buffered)
        case .awaitingRevocationAck(_, let closers):
            // Not reached: the poll thread waits inside the previous revoke. This one waits in turn.
            buffer.prepend(event)
            state = .awaitingRevocationAck(.queued, closers: closers)
            return .awaitAcknowledgement(.buffered)
        case .joining, .closing, .finished:
            return .unassign(deliverFirst(event))
        }
    }

    /// Asked by the waiting revoke callback (every few milliseconds): go on waiting, or unassign.
    /// The deadline ends the wait; a `.revoked` still buffered then reaches the worker late, unwaited.
    mutating func revocationWait(deadlinePassed: Bool) -> RevocationWaitAction {
        guard case .awaitingRevocationAck(_, let closers) = state else { return .unassign }
        guard deadlinePassed else { return .keepWaiting }
        state = .running(Waiters(next: nil, closers: closers))
        return .unassignAfterDeadline
    }

    /// Pauses the whole assignment when `capacity` messages wait; resumes it (less the user's pauses)
    /// once half drained. Polling goes on either way, so rebalances and heartbeats are still served.
    mutating func applyBackpressure() -> FetchAction {
        switch fetching {
        case .flowing where bufferedMessages >= capacity:
            fetching = .heldBack
            return .pause(Array(assignment))
        case .heldBack where bufferedMessages <= capacity / 2:
            fetching = .flowing
            return .resume(Array(assignment.subtracting(userPaused)))
        case .flowing, .heldBack:
            return .unchanged
        }
    }

    /// The poll thread starts leaving the group: from now on revokes do not wait. A member that never
    /// joined is leaked rather than destroyed.
    mutating func beginClosing() -> CloseAction {
        switch state {
        case .joining(let waiters):
            state = .closing(waiters)
            return .leaveGroupAndAbandonClient
        case .running(let waiters):
            state = .closing(waiters)
        case .awaitingRevocationAck(_, let closers):
            state = .closing(Waiters(next: nil, closers: closers))
        case .closing, .finished:
            break
        }
        return .leaveGroup
    }

    /// The poll thread ended: the sequence ends once drained, and every waiter wakes.
    mutating func finish() -> FinishAction {
        switch state {
        case .joining(let waiters), .running(let waiters), .closing(let waiters):
            state = .finished
            return .wake(next: waiters.next, closers: waiters.closers)
        case .awaitingRevocationAck(_, let closers):
            state = .finished
            return .wake(next: nil, closers: closers)
        case .finished:
            return .alreadyFinished
        }
    }

    /// Partitions whose lag to sample: none once closing.
    var partitionsToSample: [TopicPartition] {
        isLeaving ? [] : Array(assignment)
    }

    /// Keeps a lag sample, for partitions still assigned (the assignment may have changed meanwhile).
    mutating func recordLag(_ sample: [TopicPartition: Int64]) {
        lag = isLeaving ? [:] : sample.filter { assignment.contains($0.key) }
    }
}

// MARK: - Queries

extension ConsumerStateMachine {
    /// Whether a rebalance assigned something (even nothing) to this member.
    var hasJoined: Bool {
        if case .joining = state { return false }
        return true
    }

    /// Closing or finished.
    var isLeaving: Bool {
        switch state {
        case .closing, .finished: true
        case .joining, .running, .awaitingRevocationAck: false
        }
    }
}

// MARK: - Helpers

extension ConsumerStateMachine {
    /// Hands out the oldest buffered event; a `.revoked` handed out while its revocation waits becomes
    /// acknowledgeable.
    private mutating func takeFirst() -> Event? {
        guard let event = buffer.popFirst() else { return nil }
        switch event {
        case .message:
            bufferedMessages -= 1
        case .revoked:
            if case .awaitingRevocationAck(.queued, let closers) = state {
                state = .awaitingRevocationAck(.handedOut, closers: closers)
            }
        case .assigned, .error:
            break
        }
        return event
    }

    /// Takes the parked `next()` out of the state, if one is parked.
    private mutating func takeParkedNext() -> EventWaiter? {
        switch state {
        case .joining(var waiters):
            guard let waiter = waiters.next.take() else { return nil }
            state = .joining(waiters)
            return waiter
        case .running(var waiters):
            guard let waiter = waiters.next.take() else { return nil }
            state = .running(waiters)
            return waiter
        case .closing(var waiters):
            guard let waiter = waiters.next.take() else { return nil }
            state = .closing(waiters)
            return waiter
        case .awaitingRevocationAck, .finished:
            return nil
        }
    }

    /// Delivers an event ahead of the buffer: to the parked `next()`, else at the head.
    private mutating func deliverFirst(_ event: Event) -> Delivery {
        if let waiter = takeParkedNext() { return .resume(waiter, event) }
        buffer.prepend(event)
        return .buffered
    }
}
