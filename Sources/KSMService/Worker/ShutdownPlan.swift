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
}
