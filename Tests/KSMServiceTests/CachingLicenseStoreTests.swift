import Licensing
import Synchronization
import Testing

/// The worker's store cache: one read per key per TTL, one read in flight per key, failures not kept.
@Suite struct CachingLicenseStoreTests {
    final class ManualClock: Sendable {
        let base = ContinuousClock.now
        let offset = Mutex(Duration.zero)
        func now() -> ContinuousClock.Instant { base + offset.withLock { $0 } }
        func advance(_ d: Duration) { offset.withLock { $0 += d } }
    }

    static let tenant = try! StoreIdentifier("t")
    static let asset = Array("skd://live/period-1".utf8)

    func request(_ account: Int, asset: [UInt8] = asset) -> StoreRequest {
        StoreRequest(tenant: Self.tenant, account: try! StoreIdentifier("a\(account)"), assetID: asset)
    }

    /// A counting store around a seeded in-memory store.
    func seeded(fetchDelay: Duration = .zero) async throws -> ScriptedStore {
        let store = InMemoryLicenseStore()
        try await store.putTenant(TenantRecord(id: Self.tenant, keyEncryptionKeyID: try StoreIdentifier("k")))
        try await store.putContentKey(
            WrappedContentKey(wrappedKey: [UInt8](repeating: 1, count: 24), iv: [UInt8](repeating: 2, count: 16), keyEncryptionKeyID: try StoreIdentifier("k")),
            tenant: Self.tenant, assetID: Self.asset, keyPeriod: nil)
        try await store.putPolicy(Array(#"{"content-type":"sd"}"#.utf8), tenant: Self.tenant, assetID: nil)
        return ScriptedStore(store, fetchDelay: fetchDelay)
    }

    @Test("A rotation burst of 50 concurrent batches for one key costs one store read")
    func singleFlight() async throws {
        let inner = try await seeded(fetchDelay: .milliseconds(50))
        // A clock that stands still: a stalled host cannot expire the entry between the burst's batches.
        let clock = ManualClock()
        let cache = CachingLicenseStore(inner, now: { clock.now() })
        let results = try await withThrowingTaskGroup(of: [StoreResult].self) { group in
            for batch in 0..<50 {
                group.addTask { try await cache.fetch((0..<20).map { self.request(batch * 20 + $0) }) }
            }
            var all: [StoreResult] = []
            for try await r in group { all += r }
            return all
        }
        #expect(results.count == 1000)
        #expect(results.allSatisfy { $0.contentKey?.wrappedKey == [UInt8](repeating: 1, count: 24) && $0.tenant != nil })
        #expect(inner.fetchCalls == 1)
    }

    @Test("Entries expire after the TTL and are read again")
    func expiry() async throws {
        let inner = try await seeded()
        let clock = ManualClock()
        let cache = CachingLicenseStore(inner, timeToLive: .seconds(2), now: { clock.now() })
        _ = try await cache.fetch([request(1)])
        _ = try await cache.fetch([request(2)])
        #expect(inner.fetchCalls == 1)
        clock.advance(.milliseconds(2100))
        _ = try await cache.fetch([request(3)])
        #expect(inner.fetchCalls == 2)
    }

    @Test("A failed read is not cached; everyone waiting for it gets the retriable error")
    func failuresAreNotCached() async throws {
        let inner = try await seeded(fetchDelay: .milliseconds(30))
        inner.failFetch = LicenseStoreError(.unavailable, "down", isRetriable: true)
        let cache = CachingLicenseStore(inner)
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for n in 0..<5 { group.addTask { (try? await cache.fetch([self.request(n)])) == nil } }
            var failed = 0
            for await f in group where f { failed += 1 }
            return failed
        }
        #expect(outcomes == 5)
        inner.failFetch = nil
        #expect(try await cache.fetch([request(9)]).first?.tenant != nil)
    }

    @Test("An admin write through the cache drops the entry at once")
    func writesInvalidate() async throws {
        let inner = try await seeded()
        let cache = CachingLicenseStore(inner, timeToLive: .seconds(600))
        #expect(try await cache.fetch([request(1)]).first?.contentKey?.wrappedKey.first == 1)
        try await cache.putContentKey(
            WrappedContentKey(wrappedKey: [UInt8](repeating: 7, count: 24), iv: [UInt8](repeating: 2, count: 16), keyEncryptionKeyID: try StoreIdentifier("k")),
            tenant: Self.tenant, assetID: Self.asset, keyPeriod: nil)
        #expect(try await cache.fetch([request(1)]).first?.contentKey?.wrappedKey.first == 7)
    }

    @Test("An unknown tenant is not cached: provisioned by another process, it is known on the next read")
    func unknownTenantIsReadAgain() async throws {
        let inner = ScriptedStore(InMemoryLicenseStore(), fetchDelay: .milliseconds(50))
        let clock = ManualClock()
        let cache = CachingLicenseStore(inner, timeToLive: .seconds(600), now: { clock.now() })
        // Fifty concurrent batches still share the one read in flight.
        let unknown = try await withThrowingTaskGroup(of: [StoreResult].self) { group in
            for n in 0..<50 { group.addTask { try await cache.fetch([self.request(n)]) } }
            var all: [StoreResult] = []
            for try await r in group { all += r }
            return all
        }
        #expect(unknown.count == 50 && unknown.allSatisfy { $0.tenant == nil })
        let reads = inner.fetchCalls
        #expect(reads < 50)
        // Provisioned behind the cache's back (`ksm admin` is another process): the next read sees it.
        try await inner.putTenant(TenantRecord(id: Self.tenant, keyEncryptionKeyID: try StoreIdentifier("k")))
        #expect(try await cache.fetch([request(1)]).first?.tenant != nil)
        #expect(inner.fetchCalls == reads + 1)
    }
}
