/// A short-lived, single-flight cache of tenants, wrapped content keys and policies in front of a store.
///
/// Per-account records (``AccountReads``: rental starts, offline records) are never cached: a request
/// that asks for them is forwarded to the inner store in the same single round trip as the misses.
///
/// When a live stream rotates keys, every viewer asks for the same new key within a second: with
/// this cache a worker reads each (tenant, asset, key period) from Redis once per `timeToLive`, and
/// concurrent batches that miss the same entry wait for the one read already in flight instead of
/// issuing their own. Lease calls are never cached. Invalidation: entries expire after `timeToLive`
/// (default 2 s), so a changed key or policy reaches every worker within that time; admin writes
/// through this instance also drop the entry at once. Failed reads are not cached.
package final class CachingLicenseStore: LicenseStore {
    package let inner: any LicenseStore
    package let timeToLive: Duration
    let cache: Cache
    /// Hits, misses and single-flight joins, for metrics.
    package let statistics: CacheStatistics
    let now: @Sendable () -> ContinuousClock.Instant

    package init(_ inner: any LicenseStore, timeToLive: Duration = .seconds(2), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.inner = inner
        self.timeToLive = timeToLive
        self.now = now
        let statistics = CacheStatistics()
        self.statistics = statistics
        self.cache = Cache(statistics: statistics)
    }

    /// What identifies a read: the account plays no part in tenant, key or policy.
    struct Key: Hashable, Sendable {
        var tenant: StoreIdentifier
        var assetID: [UInt8]
        var keyPeriod: StoreIdentifier?
        init(_ r: StoreRequest) {
            tenant = r.tenant
            assetID = r.assetID
            keyPeriod = r.keyPeriod
        }

        /// The asset ID hashed as one block, not byte by byte (every job of a batch is looked up).
        func hash(into hasher: inout Hasher) {
            hasher.combine(tenant)
            assetID.withUnsafeBytes { hasher.combine(bytes: $0) }
            hasher.combine(keyPeriod)
        }
    }

    /// Reads served from the cache, and reads sent to the store, since start.
    package var counters: (hits: Int, misses: Int) {
        get async { await cache.counters }
    }

    package func fetch(_ requests: [StoreRequest]) async throws(LicenseStoreError) -> [StoreResult] {
        let keys = requests.map(Key.init)
        let plan = await cache.plan(keys, now: now())
        // Mutable per-account records are never cached. A rental start only matters under a policy
        // with a rental duration: a cached entry whose documents set none drops that read, so a
        // batch of cache hits needs no round trip (the result says `rentalStartRead == false`).
        var accountIndices: [Int] = []
        var accountRequests: [StoreRequest] = []
        for (index, request) in requests.enumerated() where !request.accountReads.isEmpty {
            var reads = request.accountReads
            if let hint = plan.rentalHints[keys[index]], !hint { reads.remove(.rentalStart) }
            guard !reads.isEmpty else { continue }
            var forwarded = request
            forwarded.accountReads = reads
            accountIndices.append(index)
            accountRequests.append(forwarded)
        }
        var accountResults: [Int: StoreResult] = [:]
        if !plan.toLoad.isEmpty || !accountRequests.isEmpty {
            // Each shared miss is read with the first request that names it (the account plays no
            // part in the read); `plan.toLoad` holds only keys of this batch.
            let missing = Set(plan.toLoad)
            var taken: Set<Key> = []
            var loadKeys: [Key] = []
            var loadRequests: [StoreRequest] = []
            for (index, key) in keys.enumerated() where missing.contains(key) && taken.insert(key).inserted {
                var r = requests[index]
                r.accountReads = []
                loadKeys.append(key)
                loadRequests.append(r)
            }
            // One round trip: the shared misses and the account reads together.
            let results: [StoreResult]
            do throws(LicenseStoreError) {
                results = try await inner.fetch(loadRequests + accountRequests)
            } catch {
                await cache.fail(plan.toLoad, error)
                throw error
            }
            if let error = LicenseStoreError.answerCount(results.count, of: loadRequests.count + accountRequests.count, "reads") {
                await cache.fail(plan.toLoad, error)
                throw error
            }
            if !loadKeys.isEmpty {
                await cache.store(
                    Dictionary(uniqueKeysWithValues: zip(loadKeys, results.prefix(loadRequests.count))), at: now(), expires: now() + timeToLive)
            }
            for (index, result) in zip(accountIndices, results.dropFirst(loadRequests.count)) { accountResults[index] = result }
        }
        var answers = plan.hits
        for key in plan.toWait where answers[key] == nil {
            answers[key] = try await cache.wait(for: key)
        }
        for key in plan.toLoad where answers[key] == nil {
            answers[key] = await cache.peek(key)
        }
        var out: [StoreResult] = []
        out.reserveCapacity(keys.count)
        for (index, key) in keys.enumerated() {
            if let direct = accountResults[index] {
                out.append(direct)
                continue
            }
            guard let result = answers[key] else { throw LicenseStoreError(.backend, "cache lost a read it had loaded") }
            out.append(result)
        }
        return out
    }

    package func acquireLeases(_ requests: [LeaseRequest]) async throws(LicenseStoreError) -> [LeaseResult] {
        try await inner.acquireLeases(requests)
    }

    package func listSlots(tenant: StoreIdentifier, account: StoreIdentifier, nowMilliseconds: Int64) async throws(LicenseStoreError) -> [LeaseSlot] {
        try await inner.listSlots(tenant: tenant, account: account, nowMilliseconds: nowMilliseconds)
    }

    /// Never cached: it is asked only when a tenant is unknown, and must see a store that lost its data at once.
    package func isProvisioned() async throws(LicenseStoreError) -> Bool {
        try await inner.isProvisioned()
    }

    package func putTenant(_ tenant: TenantRecord) async throws(LicenseStoreError) {
        try await inner.putTenant(tenant)
        await cache.drop { $0.tenant == tenant.id }
    }

    package func putContentKey(_ key: WrappedContentKey, tenant: StoreIdentifier, assetID: [UInt8], keyPeriod: StoreIdentifier?) async throws(LicenseStoreError)
    {
        try await inner.putContentKey(key, tenant: tenant, assetID: assetID, keyPeriod: keyPeriod)
        await cache.drop { $0.tenant == tenant && $0.assetID == assetID }
    }

    package func putPolicy(_ document: [UInt8], tenant: StoreIdentifier, assetID: [UInt8]?) async throws(LicenseStoreError) {
        try await inner.putPolicy(document, tenant: tenant, assetID: assetID)
        await cache.drop { $0.tenant == tenant && (assetID == nil || $0.assetID == assetID) }
    }

    /// The entries and the reads in flight.
    actor Cache {
        private var entries: [Key: (result: StoreResult, expires: ContinuousClock.Instant, setsRentalDuration: Bool)] = [:]
        private var loading: [Key: [CheckedContinuation<Result<StoreResult, LicenseStoreError>, Never>]] = [:]
        private(set) var hits = 0
        private(set) var misses = 0
        let statistics: CacheStatistics

        init(statistics: CacheStatistics) {
            self.statistics = statistics
        }

        var counters: (hits: Int, misses: Int) { (hits, misses) }

        struct Plan {
            var hits: [Key: StoreResult] = [:]
            /// For fresh hits: whether some stored document sets `rental.duration`.
            var rentalHints: [Key: Bool] = [:]
            var toLoad: [Key] = []
            var toWait: [Key] = []
        }

        /// Sorts keys into fresh hits, reads this caller must make (now marked in flight), and reads
        /// another caller is making.
        func plan(_ keys: [Key], now: ContinuousClock.Instant) -> Plan {
            var plan = Plan()
            for key in Set(keys) {
                if let entry = entries[key], entry.expires > now {
                    plan.hits[key] = entry.result
                    plan.rentalHints[key] = entry.setsRentalDuration
                    hits += 1
                    statistics.hit()
                } else if loading[key] != nil {
                    plan.toWait.append(key)
                    hits += 1
                    statistics.join()
                } else {
                    loading[key] = []
                    plan.toLoad.append(key)
                    misses += 1
                    statistics.miss()
                }
            }
            return plan
        }

        /// Keeps `results` until `expires`; a result without a tenant only until `now` (expired at
        /// once): its answer is final (and stored with the job), so it must not outlive a
        /// provisioning; only the waiters of this read get it.
        func store(_ results: [Key: StoreResult], at now: ContinuousClock.Instant, expires: ContinuousClock.Instant) {
            for (key, result) in results {
                // Parsed once per load; an unparsable document counts as setting it (read it).
                let setsRental = [result.tenantPolicy, result.assetPolicy, result.keyPeriodPolicy].contains { bytes in
                    guard let bytes else { return false }
                    guard let document = try? PolicyDocument(json: bytes) else { return true }
                    return document.rental.durationSeconds != nil
                }
                entries[key] = (result, result.tenant == nil ? now : expires, setsRental)
                for waiter in loading.removeValue(forKey: key) ?? [] { waiter.resume(returning: .success(result)) }
            }
            if entries.count > 100_000 { entries = entries.filter { $0.value.expires > expires - .seconds(60) } }
        }

        func fail(_ keys: [Key], _ error: LicenseStoreError) {
            for key in keys {
                for waiter in loading.removeValue(forKey: key) ?? [] { waiter.resume(returning: .failure(error)) }
            }
        }

        func wait(for key: Key) async throws(LicenseStoreError) -> StoreResult {
            if loading[key] == nil {
                // The read finished before this caller got here: stored, or failed (not cached).
                guard let entry = entries[key] else { throw LicenseStoreError(.unavailable, "the store read this batch waited for failed", isRetriable: true) }
                return entry.result
            }
            let result = await withCheckedContinuation { continuation in
                loading[key, default: []].append(continuation)
            }
            return try result.get()
        }

        func peek(_ key: Key) -> StoreResult? { entries[key]?.result }

        /// Marks the keys no caller is loading as in flight (so job batches that miss them wait for
        /// this read, single-flight) and returns them; keys already in flight are left to their reader.
        func claim(_ keys: [Key]) -> [Key] {
            var claimed: [Key] = []
            for key in keys where loading[key] == nil {
                loading[key] = []
                claimed.append(key)
            }
            return claimed
        }

        func drop(where predicate: (Key) -> Bool) {
            for key in entries.keys where predicate(key) { entries[key] = nil }
        }
    }
}
