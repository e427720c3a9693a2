/// What a ``CachingLicenseStore`` has done since it started: the numbers the metrics code renders
/// (e.g. `ksm_store_cache_hits_total`) and the rotation tests assert on.
public struct CacheStatistics: Sendable, Hashable {
    /// Reads answered from memory, including reads that waited for another caller's read in flight.
    public var hits: Int
    /// Reads a job batch sent to the inner store (one per distinct key and expiry).
    public var misses: Int
    /// Keys loaded ahead of a rotation boundary by ``CachingLicenseStore/warm(_:holdFor:)``;
    /// counted apart from misses, since no job waited for them.
    public var prefetched: Int

    public init(hits: Int = 0, misses: Int = 0, prefetched: Int = 0) {
        self.hits = hits
        self.misses = misses
        self.prefetched = prefetched
    }
}
