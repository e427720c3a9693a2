import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import KSMTestSupport
import Licensing
import RedisStore
import Testing

/// A store that lost its data (Redis restarted without persistence) is told apart from an unknown
/// tenant: its jobs are answered retriable and not stored, so they succeed once it is provisioned
/// again (docs/faults.md).
@Suite(.timeLimit(.minutes(1)))
struct StoreProvisioningTests {
    let world: World

    init() throws {
        world = try World()
    }

    /// - Parameter wipe: loses the store's data; nil for a store that cannot lose it while up.
    func check(store: any LicenseStore, guards: any JobGuardStore, wipe: (() async throws -> Void)?) async throws {
        let processor = LicenseProcessor(
            keyServer: try world.keyServer(), store: store, keyring: world.keyring, pool: sharedPool, logger: quietLogger,
            guards: JobGuards(store: guards))
        let hd = try World.job("lost-1", device: world.deviceA, World.options(World.hdAsset))
        // Nothing provisioned (or everything lost): retriable, no CKC, and not kept as the job's answer.
        #expect(try await store.isProvisioned() == false)
        let lost = try #require(await processor.process([hd.job], now: t0).first)
        #expect(
            lost.status == .storeUnavailable && lost.rule == "store:not-provisioned" && lost.isRetriable && lost.ckc == nil, "\(lost.status) \(lost.reason)")
        // Provisioned again: the same job ID is answered afresh with its license.
        try await world.seed(store)
        #expect(try await store.isProvisioned())
        let again = try #require(await processor.process([hd.job], now: t0 + 1_000).first)
        #expect(again.status == .ok && !again.isDuplicate, "\(again.status) \(again.reason)")
        #expect(try CKCOpener.open(try #require(again.ckc), session: hd.session).contentKey == world.keys[World.hdAsset]?.key)
        // In a provisioned store an unknown tenant is a final answer.
        let stranger = try World.job("lost-2", tenant: "nobody", device: world.deviceA, World.options(World.hdAsset))
        let unknown = try #require(await processor.process([stranger.job], now: t0 + 2_000).first)
        #expect(unknown.status == .unknownTenant && !unknown.isRetriable)
        // The data goes away again: known tenants' jobs are retriable too.
        guard let wipe else { return }
        try await wipe()
        #expect(try await store.isProvisioned() == false)
        let fresh = try World.job("lost-3", device: world.deviceA, World.options(World.hdAsset))
        #expect(try #require(await processor.process([fresh.job], now: t0 + 3_000).first).status == .storeUnavailable)
    }

    @Test("in memory: an empty store answers storeUnavailable, not unknownTenant, until it is provisioned")
    func inMemory() async throws {
        try await check(store: InMemoryLicenseStore(), guards: InMemoryJobGuardStore(), wipe: nil)
    }

    @Test("Redis: FLUSHALL (a restart without persistence) answers storeUnavailable until provisioned again")
    func redis() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let store = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        let admin = try RedisClient(configuration: server.configuration())
        try await check(store: store, guards: store) {
            _ = try await admin.send(["FLUSHALL"])
        }
    }

    @Test("Redis: a store provisioned before the marker existed is marked at worker start; an empty one is not")
    func markerMigration() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let store = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        let admin = try RedisClient(configuration: server.configuration())
        #expect(try await store.markProvisionedIfTenantsExist() == false)
        _ = try await admin.send(["SET", "fps:{t:acme:a:alice}:rate:1", "3"])
        #expect(try await store.markProvisionedIfTenantsExist() == false, "account keys alone do not prove provisioning")
        _ = try await admin.send(["HSET", "fps:{t:acme}:tenant", "kek", "kek-a", "max_streams", "2", "lease_seconds", "600", "cert_hashes", ""])
        #expect(try await store.isProvisioned() == false)
        #expect(try await store.markProvisionedIfTenantsExist())
        #expect(try await store.isProvisioned())
        #expect(try await admin.send(["TTL", "fps:{store}:provisioned"]).integerValue == -1, "the marker never expires")
    }
}
