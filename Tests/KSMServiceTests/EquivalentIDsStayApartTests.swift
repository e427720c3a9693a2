import FairPlay
import FairPlayDevice
import KSMTestSupport
import Kafka
import Licensing
import RedisStore
import Testing
import Wire

@testable import KSMService

/// Tenants, accounts and assets whose names are canonically equivalent but byte-different (NFC and
/// NFD) are two of each through the worker: in the caching store, in one batch's reads and lease
/// slots, in entitlement checks, in the rotation schedule cache and in the tenant labels of metrics,
/// on the in-memory store and on Redis (whose keys are bytes).
@Suite(.timeLimit(.minutes(1)))
struct EquivalentIDsStayApartTests {
    /// "café" with U+00E9 (NFC) and with "e" + U+0301 (NFD).
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"
    static let nfcAsset = "skd://\(nfc)/1"
    static let nfdAsset = "skd://\(nfd)/1"
    static let liveAsset = "skd://live"
    static let premiumAsset = "skd://\(nfd)/premium"

    let world: World

    init() throws {
        world = try World()
    }

    /// Plain keys by (tenant, asset), to check what each CKC carries.
    struct Keys {
        var byPair: [[UInt8]: [UInt8]] = [:]
        func key(_ tenant: String, _ asset: String) -> [UInt8]? { byPair[Array(tenant.utf8) + [0] + Array(asset.utf8)] }
    }

    /// Tenants NFC and NFD, both owning certificate A; each with its own key for both assets; tenant
    /// NFC also with a live asset (one stream per account) and an asset that needs a token.
    func seed(_ store: any LicenseStore) async throws -> Keys {
        var keys = Keys()
        for tenant in [Self.nfc, Self.nfd] {
            try await store.putTenant(
                TenantRecord(
                    id: id(tenant), certificateHashes: [world.credentialA.certificateHash], keyEncryptionKeyID: id("kek-a"),
                    entitlementSecrets: [id("k1"): try world.keyring.wrap(secret: World.tokenSecret, with: id("kek-a"))]))
            try await store.putPolicy(Array(#"{"content-type": "hd"}"#.utf8), tenant: id(tenant), assetID: nil)
            for asset in [Self.nfcAsset, Self.nfdAsset, Self.liveAsset, Self.premiumAsset] {
                let key = FairPlayCrypto.randomBytes(16)
                try await store.putContentKey(
                    try world.keyring.wrap(contentKey: key, iv: FairPlayCrypto.randomBytes(16), with: id("kek-a")),
                    tenant: id(tenant), assetID: Array(asset.utf8), keyPeriod: nil)
                keys.byPair[Array(tenant.utf8) + [0] + Array(asset.utf8)] = key
            }
            try await store.putPolicy(Array(#"{"lease": {"duration": 120}, "max-streams": 1}"#.utf8), tenant: id(tenant), assetID: Array(Self.liveAsset.utf8))
            try await store.putPolicy(Array(#"{"entitlement-required": true}"#.utf8), tenant: id(tenant), assetID: Array(Self.premiumAsset.utf8))
        }
        return keys
    }

    /// One batch through `store` (behind the worker's caching store): every tenant/asset pair gets
    /// its own key, the NFC and NFD accounts each their own single stream, and a token for the NFC
    /// spelling of an asset does not cover the NFD one.
    func oneBatchKeepsThemApart(_ store: any LicenseStore) async throws {
        let keys = try await seed(store)
        // An hour: a loaded host may take longer than the default 2 s over the first batch, and the
        // second must find every entry still cached.
        let cached = CachingLicenseStore(store, timeToLive: .seconds(3_600))
        let processor = try world.processor(store: cached, pool: sharedPool)
        let pairs = [(Self.nfc, Self.nfcAsset), (Self.nfc, Self.nfdAsset), (Self.nfd, Self.nfcAsset), (Self.nfd, Self.nfdAsset)]
        var jobs: [(job: LicenseJob, session: DeviceSession)] = []
        for (n, (tenant, asset)) in pairs.enumerated() {
            jobs.append(try World.job("k-\(n)", tenant: tenant, device: world.deviceA, World.options(asset)))
        }
        let play = { (n: UInt64) in MediaPlaybackInfo(creationDate: 1, state: .readyToPlay, sessionID: n) }
        for (n, account) in [Self.nfc, Self.nfd].enumerated() {
            jobs.append(
                try World.job(
                    "s-\(n)", tenant: Self.nfc, account: account, device: SimulatedDevice(trust: world.trustA),
                    World.options(Self.liveAsset, playback: play(UInt64(n + 1)))))
        }
        let token = EntitlementToken.sign(
            EntitlementClaims(subject: "alice", asset: "skd://\(Self.nfc)/premium", expiresAt: t0 / 1000 + 3600),
            keyID: "k1", secret: World.tokenSecret)
        jobs.append(try World.job("t-0", tenant: Self.nfc, device: world.deviceA, World.options(Self.premiumAsset), entitlement: token))

        let replies = await processor.process(jobs.map(\.job), now: t0)
        try #require(replies.count == jobs.count)
        for (n, (tenant, asset)) in pairs.enumerated() {
            #expect(replies[n].status == .ok, "\(replies[n].id): \(replies[n].reason)")
            let ckc = try #require(replies[n].ckc)
            let opened = try CKCOpener.open(ckc, session: jobs[n].session)
            #expect(opened.contentKey == keys.key(tenant, asset), "\(replies[n].id) carries another tenant's or asset's key")
            #expect(replies[n].assetID == Array(asset.utf8))
        }
        // max-streams 1 per account: two accounts, one stream each, both granted in one batch.
        #expect(replies[4].status == .ok && replies[4].rule == "lease:granted", "\(replies[4].reason)")
        #expect(replies[5].status == .ok && replies[5].rule == "lease:granted", "\(replies[5].reason)")
        #expect(try await store.listSlots(tenant: id(Self.nfc), account: id(Self.nfc), nowMilliseconds: t0).count == 1)
        #expect(try await store.listSlots(tenant: id(Self.nfc), account: id(Self.nfd), nowMilliseconds: t0).count == 1)
        #expect(replies[6].status == .tokenWrongAsset, "\(replies[6].reason)")

        // A second batch is served from the cache (its entries now say no rental is read, so no
        // request goes past it) and keeps every key where it was.
        let second = try pairs.enumerated().map { n, pair in try World.job("k2-\(n)", tenant: pair.0, device: world.deviceA, World.options(pair.1)) }
        let hitsBefore = await cached.counters.hits
        let again = await processor.process(second.map(\.job), now: t0 + 1)
        #expect(await cached.counters.hits - hitsBefore == pairs.count)
        for (n, (tenant, asset)) in pairs.enumerated() {
            #expect(again[n].status == .ok, "\(again[n].id): \(again[n].reason)")
            let opened = try CKCOpener.open(try #require(again[n].ckc), session: second[n].session)
            #expect(opened.contentKey == keys.key(tenant, asset), "\(again[n].id) carries another tenant's or asset's key from the cache")
        }
    }

    @Test func oneBatchKeepsEquivalentIDsApartInMemory() async throws {
        try await oneBatchKeepsThemApart(InMemoryLicenseStore())
    }

    @Test func oneBatchKeepsEquivalentIDsApartOnRedis() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        try await oneBatchKeepsThemApart(RedisLicenseStore(client: try RedisClient(configuration: server.configuration())))
    }

    @Test func rotationScheduleCacheKeepsEquivalentTenantsAndAssetsApart() {
        let cache = RotationScheduleCache()
        var schedules: [RotationSchedule] = []
        for (n, (tenant, asset)) in [(Self.nfc, Self.nfcAsset), (Self.nfc, Self.nfdAsset), (Self.nfd, Self.nfcAsset), (Self.nfd, Self.nfdAsset)].enumerated() {
            schedules.append(RotationSchedule(tenant: id(tenant), assetID: Array(asset.utf8), boundaryMilliseconds: t0 + Int64(n)))
        }
        cache.replace(with: schedules)
        let snapshot = cache.snapshot
        #expect(snapshot.count == 4)
        for schedule in schedules {
            #expect(
                snapshot[RotationScheduleCache.Key(tenant: schedule.tenant, assetID: schedule.assetID)]?.boundaryMilliseconds == schedule.boundaryMilliseconds)
        }
    }

    @Test func schedulerSharesTheWorkerBetweenEquivalentTenants() {
        var policy = SchedulingPolicy()
        policy.tenantWeights = [Self.nfc: 4]
        #expect(policy.weight(ByteKey(Self.nfc)) == 4 && policy.weight(ByteKey(Self.nfd)) == 1)

        var scheduler = JobScheduler(policy: SchedulingPolicy())
        for (n, tenant) in [Self.nfc, Self.nfc, Self.nfd, Self.nfd].enumerated() {
            // Identifiers here are valid by construction.
            let job = LicenseJob(id: id("j-\(n)"), tenant: id(tenant), account: id("a"), spc: [1, 2, 3])
            scheduler.push(
                KafkaMessage(topic: "jobs", partition: 0, offset: Int64(n), key: nil, value: job.jsonBytes(), headers: []),
                inFlight: 0, rate: 1000, now: t0)
        }
        // Two tenants share the batch fairly: one job each, not the first tenant's two.
        let batch = scheduler.nextBatch(limit: 2, now: t0).map { (try? $0.decoded.get().id.value) ?? "?" }
        #expect(batch.sorted() == ["j-0", "j-2"])
    }

    @Test func tenantLabelsGiveEquivalentTenantsTwoSeries() {
        var labels = TenantLabels(limit: 5)
        let first = labels.label(for: Self.nfc)
        let second = labels.label(for: Self.nfd)
        #expect(first == Self.nfc)
        // Apart even under `String` equality, which is how the metrics registry compares label values.
        #expect(second != first && second == "0x" + HexEncoding.encode(Array(Self.nfd.utf8)))
        #expect(labels.label(for: Self.nfd) == second && labels.label(for: Self.nfc) == first)
    }

    @Test("A tenant literally named as another's hex label never shares its series")
    func tenantNamedLikeAHexLabel() {
        var labels = TenantLabels(limit: 5)
        let hex = "0x" + HexEncoding.encode(Array(Self.nfd.utf8))
        #expect(labels.label(for: hex) == hex)
        #expect(labels.label(for: Self.nfc) == Self.nfc)
        let third = labels.label(for: Self.nfd)
        #expect(third != hex && third != Self.nfc, "\(third)")
        #expect(Set([hex, Self.nfc, third]).count == 3)
    }
}
