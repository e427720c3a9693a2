import Synchronization

/// How a worker spends its shutdown timeout: in-flight work first, then a reserve for the final
/// commit, leaving the group and flushing the producer.
///
/// Why a plan: Kubernetes sends SIGKILL `terminationGracePeriodSeconds` (30 s) after SIGTERM; a worker
/// killed before its final commit has its answered jobs redelivered (the last member of
/// a group exited 44 s after SIGTERM). Every step is bounded so the whole fits in the timeout.
struct ShutdownPlan: Sendable {
    let timeout: Duration

    /// The part of the timeout kept for commit, leaving the group and flushing: a fifth, between
    /// 1 s and 5 s (never more than half the timeout).
    var reserve: Duration {
        let fifth = timeout / 5
        return min(max(fifth, .seconds(1)), .seconds(5), timeout / 2)
    }

    func deadline(from start: ContinuousClock.Instant) -> ContinuousClock.Instant { start + timeout }

    /// When in-flight work must be done for the reserve to remain.
    func drainDeadline(before end: ContinuousClock.Instant) -> ContinuousClock.Instant { end - reserve }

    /// Time left until `end`, but never less than `floor` (a step that gets no time at all would not
    /// even try).
    func remaining(until end: ContinuousClock.Instant, atLeast floor: Duration) -> Duration {
        max(end - .now, floor)
    }

    /// Runs `body` in a task of its own and returns its result, or nil once `limit` passed (the task
    /// then runs on unobserved: used for calls that block on librdkafka and cannot be cancelled).
    static func within<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> T) async -> T? {
        let gate = FirstResult<T?>()
        return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            gate.set(continuation)
            Task { gate.resume(with: await body()) }
            Task {
                try? await Task.sleep(for: limit)
                gate.resume(with: nil)
            }
        }
    }
}

/// Resumes a continuation with whichever result comes first; later ones are ignored.
private final class FirstResult<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T, Never>?>(nil)

    func set(_ c: CheckedContinuation<T, Never>) { continuation.withLock { $0 = c } }

    func resume(with value: T) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}
