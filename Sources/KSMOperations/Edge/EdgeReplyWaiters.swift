import KSMService
import Kafka
import ServiceLifecycle
import Synchronization

/// What a request waiting for its reply gets.
package enum EdgeWaitResult: Sendable {
    case reply(LicenseReply)
    /// The broker refused the job, or did not take it before `message.timeout.ms`.
    case notQueued(KafkaError)
    /// The deadline passed first.
    case timedOut
    /// The request's task was cancelled (a shutdown out of time), or the reply consumer stopped.
    case cancelled
}

/// The ``EdgePendingTable`` under a lock, with the continuations it hands out resumed outside it:
/// the one place requests wait for replies, shared by the HTTP route, the producer's delivery
/// reports and the reply consumer.
///
/// A request waits on one continuation, resumed by whichever comes first: its reply, its job's
/// delivery failure, its deadline, its cancellation. Deadlines are swept by ``run()`` (a `Service`)
/// every ``sweepInterval``, so a request costs no timer of its own; a timeout answers at most one
/// interval late.
package final class EdgeReplyWaiters: Service, Sendable {
    package typealias Waiter = CheckedContinuation<EdgeWaitResult, Never>
    private let table: Mutex<EdgePendingTable<Waiter, EdgeWaitResult>>
    private let onCount: (@Sendable (Int) -> Void)?

    /// How often ``run()`` gives up the requests whose deadline passed.
    package static let sweepInterval: Duration = .milliseconds(10)

    /// - Parameter onCount: called with the number of requests in the table after each reserve and
    ///   remove (the in-flight gauge); under the table's lock, so the last value set is the count
    ///   now: keep it to a gauge's `set`.
    package init(capacity: Int, onCount: (@Sendable (Int) -> Void)? = nil) {
        table = Mutex(EdgePendingTable(capacity: capacity))
        self.onCount = onCount
    }

    /// Requests in the table now (the in-flight gauge).
    package var count: Int { table.withLock { $0.count } }

    /// Room for one more request under `id`, given up at `deadline`; call before producing its job.
    package func reserve(_ id: String, deadline: ContinuousClock.Instant) -> EdgePendingTable<Waiter, EdgeWaitResult>.Reservation {
        table.withLock { table in
            let reservation = table.reserve(id, deadline: deadline)
            onCount?(table.count)
            return reservation
        }
    }

    /// Ends the request: its entry leaves the table. Call on every path out of a reserved request
    /// (a `defer` right after a successful ``reserve(_:deadline:)``).
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
        place(id, .reply(reply))
    }

    /// The job of request `id` was not delivered (from the producer's delivery report): the request
    /// ends now instead of waiting out its deadline for a reply that cannot come.
    package func fail(_ id: String, _ error: KafkaError) {
        _ = place(id, .notQueued(error))
    }

    private func place(_ id: String, _ result: EdgeWaitResult) -> Delivery {
        switch table.withLock({ $0.receive(id, reply: result) }) {
        case .resume(let waiter, let result):
            waiter.resume(returning: result)
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

    /// Gives up every request whose deadline is at or before `now` (``EdgeWaitResult/timedOut``);
    /// returns how many waiters it resumed. ``run()`` calls it every ``sweepInterval``.
    @discardableResult
    package func expireDue(at now: ContinuousClock.Instant = .now) -> Int {
        let expired = table.withLock { $0.expireDue(at: now) }
        for waiter in expired { waiter.resume(returning: .timedOut) }
        return expired.count
    }

    /// Waits for the reply of reserved request `id`, until its deadline is swept or its task is
    /// cancelled.
    package func wait(_ id: String) async -> EdgeWaitResult {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: Waiter) in
                switch self.table.withLock({ $0.wait(id, waiter: waiter) }) {
                case .suspend: break
                case .resume(let result): waiter.resume(returning: result)
                case .gone(let reason): waiter.resume(returning: reason == .deadline ? .timedOut : .cancelled)
                }
            }
        } onCancel: {
            self.table.withLock { $0.expire(id, because: .cancelled) }?.resume(returning: .cancelled)
        }
    }

    /// Sweeps deadlines every ``sweepInterval`` until graceful shutdown; stopped after the HTTP
    /// server and the reply consumer, so requests still draining keep their deadlines.
    package func run() async throws {
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: Self.sweepInterval) }
            } catch {
                break
            }
            expireDue()
        }
        expireDue()
    }
}
