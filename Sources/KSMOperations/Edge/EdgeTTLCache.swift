/// A small cache whose entries live a fixed time, holding at most `capacity` of them: the edge keeps
/// what it read from Redis (tenants, certificates) here for a few seconds, so a burst of requests
/// for one tenant costs one read, and a change made with `ksm admin` is seen within ``timeToLive``.
///
/// A value type with the time passed in, so tests drive it with instants of their own. When full,
/// expired entries go first, then the entry stored earliest: a caller naming many tenants (a scan
/// of guessed names, cached as unknown) can push others out, which costs them a read, never a
/// wrong answer.
package struct EdgeTTLCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    package let capacity: Int
    package let timeToLive: Duration
    private var entries: [Key: (value: Value, stored: ContinuousClock.Instant)] = [:]

    /// - Parameters:
    ///   - capacity: the most entries held (at least 1).
    ///   - timeToLive: how long an entry answers after it was stored.
    package init(capacity: Int, timeToLive: Duration) {
        self.capacity = max(1, capacity)
        self.timeToLive = timeToLive
    }

    package var count: Int { entries.count }

    /// The value stored for `key` less than ``timeToLive`` before `now`; nil when absent or expired.
    package func value(for key: Key, now: ContinuousClock.Instant) -> Value? {
        guard let entry = entries[key], now - entry.stored < timeToLive else { return nil }
        return entry.value
    }

    /// Stores `value` for `key` as of `now`, making room first when full.
    package mutating func store(_ value: Value, for key: Key, now: ContinuousClock.Instant) {
        if entries[key] == nil, entries.count >= capacity {
            entries = entries.filter { now - $0.value.stored < timeToLive }
            if entries.count >= capacity, let oldest = entries.min(by: { $0.value.stored < $1.value.stored })?.key {
                entries[oldest] = nil
            }
        }
        entries[key] = (value, now)
    }

    package mutating func removeAll() { entries = [:] }
}
