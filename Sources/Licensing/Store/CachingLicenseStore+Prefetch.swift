/// Warming the cache ahead of a key-rotation boundary (driven by the worker's rotation prefetcher).
extension CachingLicenseStore {
    /// Reads `requests` from the inner store now, in one round trip, and keeps the answers for
    /// `holdFor` from now (or for ``timeToLive``, whichever is longer), so the storm of requests at a
    /// rotation boundary finds the next key in memory.
    ///
    /// Single-flight is kept: keys already being read by a job batch are skipped (that read fills
    /// the cache), and job batches that miss a key while this read is in flight wait for it instead
    /// of reading it again. A key warmed again is re-read (not served from the cache), so a key or
    /// policy changed in Redis reaches a worker by its next prefetch pass even while held.
    /// Per-account reads are dropped: they are never cached. Failed reads are not cached.
    /// - Returns: how many distinct keys were read.
    @discardableResult
    package func warm(_ requests: [StoreRequest], holdFor: Duration) async throws(LicenseStoreError) -> Int {
        var byKey: [Key: StoreRequest] = [:]
        var order: [Key] = []
        for request in requests {
            var read = request
            read.accountReads = []
            let key = Key(read)
            if byKey[key] == nil {
                byKey[key] = read
                order.append(key)
            }
        }
        let claimed = await cache.claim(order)
        if claimed.isEmpty { return 0 }
        let reads = claimed.compactMap { byKey[$0] }
        let results: [StoreResult]
        do throws(LicenseStoreError) {
            results = try await inner.fetch(reads)
        } catch {
            await cache.fail(claimed, error)
            throw error
        }
        if let error = LicenseStoreError.answerCount(results.count, of: reads.count, "prefetch reads") {
            await cache.fail(claimed, error)
            throw error
        }
        let loadedAt = now()
        await cache.store(Dictionary(uniqueKeysWithValues: zip(claimed, results)), at: loadedAt, expires: loadedAt + max(holdFor, timeToLive))
        statistics.prefetch(claimed.count)
        return claimed.count
    }
}
