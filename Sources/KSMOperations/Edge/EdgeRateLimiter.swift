/// Token buckets per client key: a client may make ``Rate/burst`` requests at once and
/// ``Rate/perSecond`` a second after that; the next is refused with the seconds until one is
/// allowed again (`Retry-After`).
///
/// A value type with the time passed in, so tests drive it with instants of their own. Memory is
/// bounded without a sweep: buckets live in two generations; when the current one holds half of
/// ``capacity`` keys it becomes the previous one and the former previous is dropped. A client seen
/// again moves back to the current generation, so only clients idle for a whole generation are
/// forgotten, and a forgotten client starts again with a full bucket, which is what its bucket
/// would have refilled to anyway unless it was idle for less than ``Rate/refillTime`` while half of
/// ``capacity`` other clients arrived.
package struct EdgeRateLimiter: Sendable {
    /// A rate and a burst, as `--rate-limit` and `--rate-burst` give them.
    package struct Rate: Sendable, Hashable, CustomStringConvertible {
        /// Requests a second, over 0.
        package var perSecond: Double
        /// Requests at once, at least 1.
        package var burst: Double

        package init(perSecond: Double, burst: Double) {
            self.perSecond = perSecond
            self.burst = max(1, burst)
        }

        /// How long an empty bucket takes to fill.
        package var refillTime: Duration { .milliseconds(Int64((burst / perSecond * 1_000).rounded(.up))) }

        /// The default burst for a rate: two seconds' worth, at least 1.
        package static func defaultBurst(perSecond: Double) -> Double { max(1, (perSecond * 2).rounded(.up)) }

        /// `N/s`, `N/m` (or `N/min`), `N/h`: N requests (a positive number) a second, minute or hour.
        /// Nil for anything else.
        package static func perSecond(parsing text: String) -> Double? {
            let parts = text.trimmingWhiteSpace.lowercased().split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let count = Double(parts[0]), count.isFinite, count > 0 else { return nil }
            switch parts[1] {
            case "s", "sec", "second": return count
            case "m", "min", "minute": return count / 60
            case "h", "hour": return count / 3_600
            default: return nil
            }
        }

        package var description: String {
            "\(Self.format(perSecond))/s, burst \(Self.format(burst))"
        }

        /// Whole numbers as such, others to three decimals (`1/min` is `0.017/s`).
        static func format(_ value: Double) -> String {
            let rounded = (value * 1_000).rounded() / 1_000
            return rounded == rounded.rounded() && abs(rounded) < 1e15 ? String(Int64(rounded)) : String(rounded)
        }
    }

    /// What ``take(_:now:)`` decided.
    package enum Verdict: Sendable, Hashable {
        case allowed
        /// Refused: whole seconds (at least 1) until a request would be allowed.
        case limited(retryAfterSeconds: Int)
    }

    package let rate: Rate
    /// The most buckets held.
    package let capacity: Int

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }
    private var current: [String: Bucket] = [:]
    private var previous: [String: Bucket] = [:]

    package init(rate: Rate, capacity: Int = 100_000) {
        self.rate = rate
        self.capacity = max(2, capacity)
    }

    /// Buckets held now (at most ``capacity``).
    package var count: Int { current.count + previous.count }

    /// Takes one request from `key`'s bucket, refilled for the time since it was last used.
    package mutating func take(_ key: String, now: ContinuousClock.Instant) -> Verdict {
        var bucket = current[key] ?? previous.removeValue(forKey: key) ?? Bucket(tokens: rate.burst, updated: now)
        let elapsed = now - bucket.updated
        if elapsed > .zero {
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(rate.burst, bucket.tokens + seconds * rate.perSecond)
            bucket.updated = now
        }
        let verdict: Verdict
        if bucket.tokens >= 1 {
            bucket.tokens -= 1
            verdict = .allowed
        } else {
            verdict = .limited(retryAfterSeconds: max(1, Int(((1 - bucket.tokens) / rate.perSecond).rounded(.up))))
        }
        if current[key] == nil, current.count >= capacity / 2 {
            previous = current
            current = [:]
        }
        current[key] = bucket
        return verdict
    }
}
