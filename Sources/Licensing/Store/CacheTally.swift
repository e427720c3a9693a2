import Synchronization

/// The cache's counters as atomics, so a metrics scrape reads them synchronously without waiting
/// behind the cache actor during a storm. Written only by ``CachingLicenseStore``.
final class CacheTally: Sendable {
    private let hits = Atomic<Int>(0)
    private let misses = Atomic<Int>(0)
    private let prefetched = Atomic<Int>(0)

    func add(hits n: Int = 0, misses m: Int = 0, prefetched p: Int = 0) {
        if n != 0 { hits.add(n, ordering: .relaxed) }
        if m != 0 { misses.add(m, ordering: .relaxed) }
        if p != 0 { prefetched.add(p, ordering: .relaxed) }
    }

    var snapshot: CacheStatistics {
        CacheStatistics(hits: hits.load(ordering: .relaxed), misses: misses.load(ordering: .relaxed), prefetched: prefetched.load(ordering: .relaxed))
    }
}
