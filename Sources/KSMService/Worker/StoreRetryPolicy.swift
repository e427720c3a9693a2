/// How a batch's store outage is retried before the answers go out (fail closed): the jobs answered
/// `storeUnavailable` are processed again, twice, after a short backoff; leases are idempotent per
/// job ID and reads have no side effect, so a retry never takes a second slot.
struct StoreRetryPolicy: Sendable, Equatable {
    /// Attempts after the first. Default: 2.
    var retries = 2

    /// What to do once `attempts` answers were made (1: the first).
    enum Decision: Sendable, Equatable {
        /// Process the jobs at these indices again, after waiting `after`.
        case retry([Int], after: Duration)
        /// Publish the answers as they are.
        case done
    }

    /// Retries the jobs the store failed, while attempts remain: 100 ms after the first answer, then
    /// 400 ms (quadratic, so a store that is restarting gets room without a whole batch waiting long).
    func next(afterAttempts attempts: Int, statuses: [KSMStatus?]) -> Decision {
        guard attempts <= retries else { return .done }
        let failed = statuses.indices.filter { statuses[$0] == .storeUnavailable }
        if failed.isEmpty { return .done }
        return .retry(failed, after: .milliseconds(100 * attempts * attempts))
    }

    /// The retry-after hint for a `storeUnavailable` answer that has none: 1 to 2 s, jittered, so the
    /// clients of a whole batch do not come back at the same moment.
    static func retryAfterMilliseconds(using generator: inout some RandomNumberGenerator) -> Int64 {
        Int64.random(in: 1_000...2_000, using: &generator)
    }
}
