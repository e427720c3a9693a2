/// A value loaded per key and kept for a few seconds (``EdgeTTLCache``), with concurrent requests
/// for one key sharing a single load, so a burst after expiry costs the store one read. A failed
/// load is kept only ``failureTimeToLive`` (1 s, the `Retry-After` of the 503 it answers), so an
/// unreachable Redis is asked once a second per key, not once per request.
package actor EdgeCachedLoader<Key: Hashable & Sendable, Value: Sendable> {
    private var cache: EdgeTTLCache<Key, Value>
    private var loading: [Key: Task<Value, Never>] = [:]
    private let load: @Sendable (Key) async -> Value
    private let isFailure: @Sendable (Value) -> Bool
    package let failureTimeToLive: Duration

    /// - Parameters:
    ///   - isFailure: true for a value kept only `failureTimeToLive` (a failed read).
    ///   - failureTimeToLive: how long a failure answers; zero: not kept.
    package init(
        capacity: Int, timeToLive: Duration, isFailure: @escaping @Sendable (Value) -> Bool = { _ in false },
        failureTimeToLive: Duration = .seconds(1), load: @escaping @Sendable (Key) async -> Value
    ) {
        self.cache = EdgeTTLCache(capacity: capacity, timeToLive: timeToLive)
        self.load = load
        self.isFailure = isFailure
        self.failureTimeToLive = failureTimeToLive
    }

    package func value(for key: Key) async -> Value {
        if let hit = cache.value(for: key, now: .now) { return hit }
        if let pending = loading[key] { return await pending.value }
        let task = Task { [load] in await load(key) }
        loading[key] = task
        let value = await task.value
        loading[key] = nil
        if !isFailure(value) {
            cache.store(value, for: key, now: .now)
        } else if failureTimeToLive > .zero {
            cache.store(value, for: key, now: .now, timeToLive: failureTimeToLive)
        }
        return value
    }
}
