import FairPlay
import Foundation
import KSMService
import KSMTestSupport
import Licensing
import RedisStore
import Synchronization
import Testing

/// A clock the test moves by hand, for the cache's expiry.
final class ManualClock: Sendable {
    private let instant = Mutex(ContinuousClock.now)
    var now: ContinuousClock.Instant { instant.withLock { $0 } }
    func advance(_ by: Duration) { instant.withLock { $0 = $0 + by } }
}

/// The worker's rotation prefetch against a real redis-server: the next key is read before the
/// boundary, and the storm after it is served from memory.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct RotationPrefetchTests {
    let wall = LicenseProcessor.currentTimeMilliseconds()
    let current = Array("skd://acme/live-1".utf8)
    let next = Array("skd://acme/live-2".utf8)

    func seed(_ redis: RedisLicenseStore, world: World) async throws {
        try await redis.putTenant(TenantRecord(id: id("acme"), certificateHashes: [world.credentialA.certificateHash], keyEncryptionKeyID: id("kek-a")))
        try await redis.putPolicy(Array(#"{"lease": {"duration": 600}}"#.utf8), tenant: id("acme"), assetID: nil)
        for asset in [current, next] {
            let wrapped = try world.keyring.wrap(contentKey: FairPlayCrypto.randomBytes(16), iv: FairPlayCrypto.randomBytes(16), with: id("kek-a"))
            try await redis.putContentKey(wrapped, tenant: id("acme"), assetID: asset, keyPeriod: nil)
        }
    }

    /// `count` viewers asking for the next key at once, in batches of 50 as a worker would send them.
    func storm(_ cache: CachingLicenseStore, asset: [UInt8], count: Int) async throws -> [StoreResult] {
        try await withThrowingTaskGroup(of: [StoreResult].self) { group in
            for batch in stride(from: 0, to: count, by: 50) {
                group.addTask {
                    let requests = (batch..<min(batch + 50, count)).map { StoreRequest(tenant: id("acme"), account: id("viewer-\($0)"), assetID: asset) }
                    return try await cache.fetch(requests)
                }
            }
            var all: [StoreResult] = []
            for try await results in group { all += results }
            return all
        }
    }

    @Test func prefetchBeforeTheBoundaryLeavesTheStormNoKeyReads() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let world = try World()
        let redis = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        try await seed(redis, world: world)
        try await redis.putRotation(RotationSchedule(tenant: id("acme"), assetID: current, nextAssetID: next, boundaryMilliseconds: wall + 10_000))

        let counting = ScriptedStore(redis)
        let clock = ManualClock()
        let cache = CachingLicenseStore(counting, timeToLive: .seconds(2), now: { clock.now })
        let prefetcher = RotationPrefetcher(schedules: redis, cache: cache, logger: quietLogger)

        // 10 s before the boundary: inside the default 30 s lead time.
        #expect(try await prefetcher.pass(now: wall) == 1)
        #expect(counting.fetchCalls == 1, "one batched read for every due key")
        #expect(cache.statistics.prefetched == 1)

        // The boundary passes: far beyond the cache's 2 s TTL, within the hold after the boundary.
        clock.advance(.seconds(11))
        let hitsBefore = cache.statistics.hits
        let missesBefore = cache.statistics.misses
        let results = try await storm(cache, asset: next, count: 1_000)
        #expect(results.count == 1_000 && results.allSatisfy { $0.contentKey != nil && $0.tenant != nil })
        #expect(counting.fetchCalls == 1, "the storm after the boundary cost Redis no key read")
        #expect(cache.statistics.hits - hitsBefore == 1_000 / 50, "one hit per batch and key")
        #expect(cache.statistics.misses == missesBefore)

        // Control: the current asset was not prefetched, so its entry is a read after the TTL.
        _ = try await storm(cache, asset: current, count: 100)
        #expect(counting.fetchCalls == 2, "without prefetch the storm costs one (single-flight) read")
    }

    @Test func schedulesBeyondTheLeadTimeAreNotPrefetchedAndLoadCountsViewers() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let world = try World()
        let redis = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        try await seed(redis, world: world)
        try await redis.putRotation(
            RotationSchedule(tenant: id("acme"), assetID: current, nextAssetID: next, boundaryMilliseconds: wall + 20_000, keysPerViewer: 2))
        try await redis.putRotation(RotationSchedule(tenant: id("acme"), assetID: Array("skd://acme/later".utf8), boundaryMilliseconds: wall + 120_000))
        // Three live sessions on the current asset (leases written by workers record viewers).
        let leases = (1...3).map { n in
            var r = LeaseRequest(
                requestID: id("r\(n)"), tenant: id("acme"), account: id("a\(n)"), deviceID: [UInt8](repeating: UInt8(n), count: 20),
                sessionID: 1, maxConcurrentStreams: 2, leaseDurationSeconds: 600, nowMilliseconds: wall)
            r.viewedAssetID = current
            return r
        }
        _ = try await redis.acquireLeases(leases)

        let counting = ScriptedStore(redis)
        let cache = CachingLicenseStore(counting)
        let status = RotationStatus()
        let prefetcher = RotationPrefetcher(configuration: .init(leadTime: .seconds(30)), schedules: redis, cache: cache, status: status, logger: quietLogger)
        #expect(try await prefetcher.pass(now: wall) == 1, "only the schedule within the lead time")
        #expect(status.snapshot.expectedLoad == 3 * 2, "3 viewers x 2 keys")
        #expect(status.snapshot.dueSchedules == 1)
        #expect(cache.statistics.misses == 0)

        // Once the boundary is behind, nothing is due and the expected load drops to zero.
        #expect(try await prefetcher.pass(now: wall + 25_000) == 0)
        #expect(status.snapshot.expectedLoad == 0)
    }

    @Test func failedPassIsCountedAndLeavesNothingCached() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let world = try World()
        let redis = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        try await seed(redis, world: world)
        try await redis.putRotation(RotationSchedule(tenant: id("acme"), assetID: current, nextAssetID: next, boundaryMilliseconds: wall + 10_000))
        let counting = ScriptedStore(redis)
        counting.failFetch = LicenseStoreError(.unavailable, "down", isRetriable: true)
        let cache = CachingLicenseStore(counting)
        let prefetcher = RotationPrefetcher(schedules: redis, cache: cache, logger: quietLogger)
        await #expect(throws: LicenseStoreError.self) { try await prefetcher.pass(now: wall) }
        counting.failFetch = nil
        // The failed read was not cached, and the key is not stuck "in flight": the next read loads it.
        let results = try await cache.fetch([StoreRequest(tenant: id("acme"), account: id("v"), assetID: next)])
        #expect(results.first?.contentKey != nil)
        #expect(counting.fetchCalls == 2)
    }
}
