import KSMService
import Synchronization

/// What a request waiting for its reply gets.
package enum EdgeWaitResult: Sendable {
    case reply(LicenseReply)
    /// The deadline passed first.
    case timedOut
    /// The request's task was cancelled (a shutdown out of time), or the reply consumer stopped.
    case cancelled
}

/// The ``EdgePendingTable`` under a lock, with the continuations it hands out resumed outside it:
/// the one place requests wait for replies, shared by the HTTP route and the reply consumer.
package final class EdgeReplyWaiters: Sendable {
    package typealias Waiter = CheckedContinuation<EdgeWaitResult, Never>
    private let table: Mutex<EdgePendingTable<Waiter, LicenseReply>>
    private let onCount: (@Sendable (Int) -> Void)?

    /// - Parameter onCount: called with the number of requests in the table after each reserve and
    ///   remove (the in-flight gauge); under the table's lock, so the last value set is the count
    ///   now: keep it to a gauge's `set`.
    package init(capacity: Int, onCount: (@Sendable (Int) -> Void)? = nil) {
        table = Mutex(EdgePendingTable(capacity: capacity))
        self.onCount = onCount
    }

    /// Requests in the table now (the in-flight gauge).
    package var count: Int { table.withLock { $0.count } }

    /// Room for one more request under `id`; call before producing its job.
    package func reserve(_ id: String) -> EdgePendingTable<Waiter, LicenseReply>.Reservation {
        table.withLock { table in
            let reservation = table.reserve(id)
            onCount?(table.count)
            return reservation
        }
    }

    /// Ends the request: its entry leaves the table. Call on every path out of a reserved request
    /// (a `defer` right after a successful ``reserve(_:)``).
    package func remove(_ id: String) {
        let waiter = table.withLock { table in
            let waiter = table.remove(id)
            onCount?(table.count)
            return waiter
        }
        waiter?.resume(returning: .cancelled)
    }

    /// How a reply was placed, for the counters.
    package enum Delivery: Sendable, Equatable {
        /// A waiting request has it (or will, once it waits).
        case matched
        /// No request of this edge start waits for this correlation ID.
        case unmatched
        /// The request already had an answer, or gave up.
        case duplicate
    }

    /// A reply for correlation ID `id`, from the reply consumer's thread.
    @discardableResult
    package func deliver(_ id: String, reply: LicenseReply) -> Delivery {
        switch table.withLock({ $0.receive(id, reply: reply) }) {
        case .resume(let waiter, let reply):
            waiter.resume(returning: .reply(reply))
            return .matched
        case .kept: return .matched
        case .unmatched: return .unmatched
        case .duplicate: return .duplicate
        }
    }

    /// Every waiting request is given up (``EdgeWaitResult/cancelled``): no reply can come any more.
    package func cancelAll() {
        for waiter in table.withLock({ $0.expireAll() }) { waiter.resume(returning: .cancelled) }
    }

    /// Waits for the reply of reserved request `id` until `deadline`.
    package func wait(_ id: String, until deadline: ContinuousClock.Instant) async -> EdgeWaitResult {
        await withTaskGroup(of: EdgeWaitResult?.self) { group in
            group.addTask {
                // Ends at the deadline, or early when the reply came (the group is cancelled) or the
                // request's task was cancelled.
                try? await Task.sleep(until: deadline, clock: .continuous)
                let result: EdgeWaitResult = Task.isCancelled && ContinuousClock.now < deadline ? .cancelled : .timedOut
                self.table.withLock { $0.expire(id) }?.resume(returning: result)
                return nil
            }
            group.addTask {
                await withCheckedContinuation { (waiter: Waiter) in
                    switch self.table.withLock({ $0.wait(id, waiter: waiter) }) {
                    case .suspend: break
                    case .resume(let reply): waiter.resume(returning: .reply(reply))
                    case .gone: waiter.resume(returning: ContinuousClock.now < deadline ? .cancelled : .timedOut)
                    }
                }
            }
            var outcome: EdgeWaitResult = .cancelled
            while let result = await group.next() {
                guard let result else { continue }
                outcome = result
                group.cancelAll()
            }
            return outcome
        }
    }
}
