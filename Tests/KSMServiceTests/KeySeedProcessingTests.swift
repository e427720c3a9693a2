import FairPlay
import FairPlayDevice
import KSMService
import Licensing
import Testing
import Wire

/// A tenant with a key seed: assets with no stored key get the derived key (docs/key-seeds.md),
/// checked by opening the CKC with the simulated device.
@Suite(.timeLimit(.minutes(1)))
struct KeySeedProcessingTests {
    let world: World
    let seed = Array(UInt8(0)...UInt8(31))
    static let seededAsset = "skd://acme/live-1"
    static let storedAsset = "skd://acme/stored"

    init() throws {
        world = try World()
    }

    func store(seeded: Bool) async throws -> ScriptedStore {
        let store = InMemoryLicenseStore()
        let wrappedSeed = seeded ? try world.keyring.wrap(secret: seed, with: id("kek-a")) : nil
        try await store.putTenant(
            TenantRecord(id: id("acme"), certificateHashes: [world.credentialA.certificateHash], keyEncryptionKeyID: id("kek-a"), keySeed: wrappedSeed))
        try await store.putPolicy(Array(#"{"content-type": "hd"}"#.utf8), tenant: id("acme"), assetID: nil)
        return ScriptedStore(store)
    }

    @Test func assetWithNoStoredKeyGetsTheKeyDerivedFromTheSeed() async throws {
        let store = try await store(seeded: true)
        let processor = try world.processor(store: store, pool: sharedPool)
        let (job, session) = try World.job("j1", device: world.deviceA, World.options(Self.seededAsset))
        let replies = await processor.process([job], now: t0)
        let reply = try #require(replies.first)
        #expect(reply.status == .ok, "\(reply.reason)")
        let opened = try CKCOpener.open(try #require(reply.ckc), session: session)
        // The documented vector for (0x00...0x1f, "skd://acme/live-1").
        #expect(HexEncoding.encode(opened.contentKey) == "5bd2de00f6aaf95087414346767cbb84")
        #expect(HexEncoding.encode(opened.contentIV) == "3235e2aef1b100678947b0d34b7b8fa0")
        #expect(store.fetchCalls == 1, "the batch's one read; no key lookup beyond it")
    }

    @Test func storedKeyWinsOverTheSeed() async throws {
        let store = try await store(seeded: true)
        let stored = (key: [UInt8](repeating: 0x11, count: 16), iv: [UInt8](repeating: 0x22, count: 16))
        try await store.putContentKey(
            try world.keyring.wrap(contentKey: stored.key, iv: stored.iv, with: id("kek-a")), tenant: id("acme"),
            assetID: Array(Self.storedAsset.utf8), keyPeriod: nil)
        let processor = try world.processor(store: store, pool: sharedPool)
        let (job, session) = try World.job("j1", device: world.deviceA, World.options(Self.storedAsset))
        let reply = try #require(await processor.process([job], now: t0).first)
        let opened = try CKCOpener.open(try #require(reply.ckc), session: session)
        #expect(opened.contentKey == stored.key && opened.contentIV == stored.iv)
    }

    @Test func tenantWithoutSeedStillRefusesAnAssetWithNoKey() async throws {
        let processor = try world.processor(store: try await store(seeded: false), pool: sharedPool)
        let (job, _) = try World.job("j1", device: world.deviceA, World.options(Self.seededAsset))
        let reply = try #require(await processor.process([job], now: t0).first)
        #expect(reply.status == .noContentKey)
        #expect(reply.ckc == nil)
    }

    @Test func seedWrappedUnderAnUnknownKEKFailsClosed() async throws {
        let store = InMemoryLicenseStore()
        let other = try KeyEncryptionKeyring([id("kek-x"): [UInt8](repeating: 9, count: 16)])
        try await store.putTenant(
            TenantRecord(
                id: id("acme"), certificateHashes: [world.credentialA.certificateHash], keyEncryptionKeyID: id("kek-x"),
                keySeed: try other.wrap(secret: seed, with: id("kek-x"))))
        try await store.putPolicy(Array(#"{"content-type": "hd"}"#.utf8), tenant: id("acme"), assetID: nil)
        let processor = try world.processor(store: store, pool: sharedPool)
        let (job, _) = try World.job("j1", device: world.deviceA, World.options(Self.seededAsset))
        let reply = try #require(await processor.process([job], now: t0).first)
        #expect(reply.status == .keyUnwrapFailed)
        #expect(reply.rule == "key:seed")
        #expect(reply.ckc == nil)
    }
}
