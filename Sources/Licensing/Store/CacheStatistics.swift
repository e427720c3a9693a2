import Synchronization

/// What a ``CachingLicenseStore`` did since start, readable without awaiting its actor (a metrics
/// scrape runs on a plain thread). Atomics: the cache bumps them once per planned key.
public final class CacheStatistics: Sendable {
    private let hitCount = Atomic<Int>(0)
    private let missCount = Atomic<Int>(0)
    private let joinCount = Atomic<Int>(0)
    private let prefetchCount = Atomic<Int>(0)

    package init() {}

    /// Reads answered from a fresh entry.
    package var hits: Int { hitCount.load(ordering: .relaxed) }
    /// Reads sent to the inner store.
    package var misses: Int { missCount.load(ordering: .relaxed) }
    /// Reads that waited for the same read another batch already had in flight (single-flight).
    package var joins: Int { joinCount.load(ordering: .relaxed) }
    /// Keys loaded ahead of a rotation boundary by ``CachingLicenseStore/warm(_:holdFor:)``; counted
    /// apart from misses, since no job waited for them.
    package var prefetched: Int { prefetchCount.load(ordering: .relaxed) }

    func hit() { hitCount.add(1, ordering: .relaxed) }
    func miss() { missCount.add(1, ordering: .relaxed) }
    func join() { joinCount.add(1, ordering: .relaxed) }
    func prefetch(_ count: Int) { prefetchCount.add(count, ordering: .relaxed) }
}
