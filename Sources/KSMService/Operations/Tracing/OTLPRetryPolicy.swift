/// How an export attempt that failed in a retriable way is retried: capped exponential backoff
/// with jitter, a bounded number of attempts, and never past the export deadline. A collector's
/// `Retry-After` replaces the backoff for that wait.
public struct OTLPRetryPolicy: Sendable, Hashable {
    /// Attempts per batch, the first included; then the batch is dropped and counted. Default: 5.
    public var maximumAttempts = 5
    /// The wait before the second attempt. Default: 500 ms.
    public var initialBackoff: Duration = .milliseconds(500)
    /// The longest wait between attempts. Default: 5 s.
    public var maximumBackoff: Duration = .seconds(5)
    /// Each wait is the backoff times a random factor in 1 +- jitter. Default: 0.2.
    public var jitter = 0.2

    public init() {}

    /// The wait before attempt `attempt + 1` (attempt counts from 1).
    func backoff(after attempt: Int) -> Duration {
        var wait = initialBackoff
        for _ in 1..<max(1, attempt) where wait < maximumBackoff { wait = wait * 2 }
        wait = min(wait, maximumBackoff)
        let factor = jitter > 0 ? Double.random(in: (1 - jitter)...(1 + jitter)) : 1
        return wait * factor
    }
}
