/// Decides when a repeated failure is worth a log line: the first at once, then at most one per
/// `interval`, each saying how many were folded into it. Export errors go through one, so a collector
/// that is down for an hour costs a line a minute, not one per batch (and never one per span).
struct LogRateLimiter: Sendable {
    let interval: Duration
    private var lastLogged: ContinuousClock.Instant?
    private var suppressed = 0

    init(interval: Duration) { self.interval = interval }

    /// Call once per event. Returns nil to stay quiet, or the number of events suppressed since the
    /// last line (0 for the first), to log now.
    mutating func shouldLog(now: ContinuousClock.Instant = .now) -> Int? {
        if let lastLogged, now - lastLogged < interval {
            suppressed += 1
            return nil
        }
        defer { suppressed = 0 }
        lastLogged = now
        return suppressed
    }

    /// Starts afresh after a success, so the next failure is logged at once.
    mutating func reset() {
        lastLogged = nil
        suppressed = 0
    }
}
