import HeapModule

/// The edge's requests waiting for their replies, as a value: every decision (room for one more,
/// a reply for whom, a deadline passed, a request gone) is a transition that returns what to do,
/// performed by the caller outside its lock (``EdgeReplyWaiters``), so the table is tested without
/// Kafka, a running clock or a continuation.
///
/// Deadlines live in the table too, soonest first, and one sweep (``expireDue(at:)``) gives up
/// every request whose deadline passed: a timer per request (a task group and a sleep) cost more
/// of the edge's CPU than the route's own work.
///
/// An entry lives from ``reserve(_:)`` (before the job is produced) to ``remove(_:)`` (on every
/// path out of the request: answered, timed out, cancelled, failed to produce). A reply may arrive
/// before its waiter is installed (a fast worker): it is kept in the entry and handed over by
/// ``wait(_:waiter:)``. A reply for an ID not in the table is unmatched: an earlier request's,
/// one that already timed out, another edge start's, or a duplicate.
package struct EdgePendingTable<Waiter, Reply> {
    /// Requests in the table at once; ``reserve(_:)`` refuses the next one.
    package let capacity: Int
    private var entries: [String: Entry] = [:]
    /// Every reservation's deadline, soonest first. An ID whose request already left stays here
    /// until its deadline comes up and is then skipped: at most the requests of one deadline's span.
    private var deadlines = Heap<Deadline>()

    private struct Deadline: Comparable {
        var instant: ContinuousClock.Instant
        var id: String

        static func < (lhs: Self, rhs: Self) -> Bool {
            lhs.instant != rhs.instant ? lhs.instant < rhs.instant : lhs.id.utf8.lexicographicallyPrecedes(rhs.id.utf8)
        }
    }

    /// Why a request was given up before its reply came.
    package enum GiveUp: Sendable, Equatable {
        /// Its deadline passed.
        case deadline
        /// Its task was cancelled, or no reply can come any more (the reply consumer stopped).
        case cancelled
    }

    private enum Entry {
        /// Reserved, no waiter installed yet, no reply yet.
        case reserved
        case waiting(Waiter)
        /// The reply came before the waiter.
        case answered(Reply)
        /// Answered; kept until ``remove(_:)`` so a late duplicate is not unmatched twice.
        case done
        /// Given up before a waiter took a reply; kept until ``remove(_:)`` like ``done``.
        case givenUp(GiveUp)
    }

    package init(capacity: Int) {
        precondition(capacity > 0, "capacity must be positive")
        self.capacity = capacity
    }

    /// Entries in the table: requests in flight.
    package var count: Int { entries.count }

    package enum Reservation: Equatable, Sendable {
        case reserved
        /// ``capacity`` requests are in flight: answer 503 now.
        case atCapacity
        /// The ID is already in the table (a correlation ID is never reused: a bug).
        case duplicate
    }

    /// Makes room for one request under `id`, before its job is produced; ``expireDue(at:)`` gives
    /// it up once `deadline` passed.
    package mutating func reserve(_ id: String, deadline: ContinuousClock.Instant) -> Reservation {
        guard entries[id] == nil else { return .duplicate }
        guard entries.count < capacity else { return .atCapacity }
        entries[id] = .reserved
        deadlines.insert(Deadline(instant: deadline, id: id))
        return .reserved
    }

    package enum WaitAction {
        /// Suspend: the waiter is installed and will be handed out by ``receive(_:reply:)``,
        /// ``expire(_:)`` or ``remove(_:)``.
        case suspend
        /// The reply is already here: resume the waiter with it at once.
        case resume(Reply)
        /// No entry (``GiveUp/cancelled``), or it was given up before the waiter came (a deadline
        /// passed, the request was cancelled): resume the waiter with "no reply", for that reason.
        case gone(GiveUp)
    }

    /// Installs the waiter of a reserved request.
    package mutating func wait(_ id: String, waiter: Waiter) -> WaitAction {
        switch entries[id] {
        case .reserved?:
            entries[id] = .waiting(waiter)
            return .suspend
        case .answered(let reply)?:
            entries[id] = .done
            return .resume(reply)
        case .waiting?:
            // One waiter per request: a second one is a bug; it gets nothing.
            return .gone(.cancelled)
        case .givenUp(let reason)?:
            return .gone(reason)
        case .done?, nil:
            return .gone(.cancelled)
        }
    }

    package enum ReceiveAction {
        /// Resume this waiter with the reply.
        case resume(Waiter, Reply)
        /// Kept for a waiter still to come.
        case kept
        /// Count and drop: no request of this start waits for it.
        case unmatched
        /// A second reply for a request already answered (a redelivered job): drop.
        case duplicate
    }

    /// A reply arrived for `id`.
    package mutating func receive(_ id: String, reply: Reply) -> ReceiveAction {
        switch entries[id] {
        case .reserved?:
            entries[id] = .answered(reply)
            return .kept
        case .waiting(let waiter)?:
            entries[id] = .done
            return .resume(waiter, reply)
        case .answered?, .done?, .givenUp?:
            return .duplicate
        case nil:
            return .unmatched
        }
    }

    /// The request's deadline passed, or it was cancelled (`reason`): the waiter to resume with "no
    /// reply", if one is installed. A reply arriving after this is a duplicate until ``remove(_:)``;
    /// a reply that arrived before it, with the waiter not yet installed, is kept for the waiter.
    package mutating func expire(_ id: String, because reason: GiveUp = .deadline) -> Waiter? {
        switch entries[id] {
        case .waiting(let waiter)?:
            entries[id] = .givenUp(reason)
            return waiter
        case .reserved?:
            entries[id] = .givenUp(reason)
            return nil
        case .answered?, .done?, .givenUp?, nil:
            // A reply already here is still answered: the waiter, about to come, takes it.
            return nil
        }
    }

    /// Gives up every request whose deadline is at or before `now` (as ``expire(_:because:)``);
    /// returns the waiters to resume with "no reply".
    package mutating func expireDue(at now: ContinuousClock.Instant) -> [Waiter] {
        var waiters: [Waiter] = []
        while let next = deadlines.min, next.instant <= now {
            _ = deadlines.removeMin()
            if let waiter = expire(next.id) { waiters.append(waiter) }
        }
        return waiters
    }

    /// The request is over: its entry leaves the table whatever its state. Returns a waiter still
    /// installed (the caller resumes it with "no reply"; on the normal paths there is none).
    @discardableResult
    package mutating func remove(_ id: String) -> Waiter? {
        guard case .waiting(let waiter)? = entries.removeValue(forKey: id) else { return nil }
        return waiter
    }

    /// Every installed waiter, each entry given up (the reply consumer stopped: nothing more comes).
    package mutating func expireAll() -> [Waiter] {
        var waiters: [Waiter] = []
        for (id, entry) in entries {
            switch entry {
            case .waiting(let waiter):
                waiters.append(waiter)
                entries[id] = .givenUp(.cancelled)
            case .reserved: entries[id] = .givenUp(.cancelled)
            case .answered, .done, .givenUp: break
            }
        }
        return waiters
    }
}
