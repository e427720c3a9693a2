/// A small cache whose entries live a given time, holding at most `capacity` of them: the edge keeps
/// what it read from Redis (tenants, certificates) here for a few seconds, so a burst of requests
/// for one tenant costs one read, and a change made with `ksm admin` is seen within ``timeToLive``.
///
/// A value type with the time passed in, so tests drive it with instants of their own. When full,
/// expired entries go first, then the entry that expires first: a caller naming many tenants (a scan
/// of guessed names, cached as unknown) can push others out, which costs them a read, never a
/// wrong answer.
package struct EdgeTTLCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    package let capacity: Int
    package let timeToLive: Duration
    private var entries: [Key: (value: Value, expires: ContinuousClock.Instant)] = [:]

    /// - Parameters:
    ///   - capacity: the most entries held (at least 1).
    ///   - timeToLive: how long an entry answers after it was stored, unless ``store(_:for:now:timeToLive:)`` says otherwise.
    package init(capacity: Int, timeToLive: Duration) {
        self.capacity = max(1, capacity)
        self.timeToLive = timeToLive
    }

    package var count: Int { entries.count }

    /// The value stored for `key`, unless it expired by `now`; nil when absent or expired.
    package func value(for key: Key, now: ContinuousClock.Instant) -> Value? {
        guard let entry = entries[key], now < entry.expires else { return nil }
        return entry.value
    }

    /// Stores `value` for `key` as of `now`, for `timeToLive` (default: the cache's), making room
    /// first when full.
    package mutating func store(_ value: Value, for key: Key, now: ContinuousClock.Instant, timeToLive: Duration? = nil) {
        if entries[key] == nil, entries.count >= capacity {
            entries = entries.filter { now < $0.value.expires }
            if entries.count >= capacity, let first = entries.min(by: { $0.value.expires < $1.value.expires })?.key {
                entries[first] = nil
            }
        }
        entries[key] = (value, now + (timeToLive ?? self.timeToLive))
    }

    package mutating func removeAll() { entries = [:] }
}
