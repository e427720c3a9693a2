import Kafka

/// Decides the final commit's attempts, as values: how long each may take and what follows its
/// outcome. The stored offsets are committed before the worker leaves its group (a commit after
/// revocation is refused), retried until a deadline: an answered job whose offset did not reach the
/// broker is answered again by the next owner.
///
/// Why retries: when other members leave at the same time, the coordinator is rebalancing and
/// refuses commits (`REBALANCE_IN_PROGRESS`) until every member rejoined or its session timed out;
/// each attempt is bounded, so one held by the rebalance does not use up the time, and the commit
/// goes through once the rebalance completes (session.timeout.ms below the shutdown timeout).
struct FinalCommitAttempts: Sendable {
    /// No attempt starts later than a little before this.
    let end: ContinuousClock.Instant
    /// The longest one attempt may take. Default: 1.5 s.
    var attemptLimit: Duration = .milliseconds(1500)
    /// Every attempt gets at least this, however late. Default: 200 ms.
    var minimumAttempt: Duration = .milliseconds(200)
    /// The wait after a refused commit. Default: 100 ms.
    var backoff: Duration = .milliseconds(100)
    private(set) var attempts = 0

    init(end: ContinuousClock.Instant) { self.end = end }

    enum Outcome: Sendable {
        case committed
        case failed(KafkaError)
        /// The attempt did not answer within its limit (it runs on, unobserved).
        case timedOut
    }

    enum Next: Sendable, Equatable {
        case done
        /// Attempt again after this wait (zero after a timeout: that attempt already took its time).
        case retry(after: Duration)
        /// Out of time, or the shutdown was cancelled: the jobs answered since the last commit are redelivered.
        case giveUp
    }

    /// Starts an attempt: how long it may take from `now`.
    mutating func begin(now: ContinuousClock.Instant) -> Duration {
        attempts += 1
        return max(min(end - now, attemptLimit), minimumAttempt)
    }

    /// What follows `outcome`, observed at `now`.
    func next(after outcome: Outcome, now: ContinuousClock.Instant, cancelled: Bool = false) -> Next {
        if case .committed = outcome { return .done }
        guard !cancelled, now + minimumAttempt < end else { return .giveUp }
        if case .timedOut = outcome { return .retry(after: .zero) }
        return .retry(after: backoff)
    }
}
