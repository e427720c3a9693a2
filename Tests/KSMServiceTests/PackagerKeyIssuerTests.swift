import FairPlay
import FairPlayDevice
import KSMService
import KSMTestSupport
import Licensing
import RedisStore
import Testing
import Wire

/// SPEKE key issuing on a real redis-server: one key per (content, period, KID) however often and
/// from however many provider instances it is asked for, and the worker serving exactly it to a
/// simulated device that puts the `skd://` URI in its SPC.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct PackagerKeyIssuerTests {
    let world: World
    let seed = Array(UInt8(0)...UInt8(31))
    let start: Int64 = 1_767_225_600_000

    init() throws {
        world = try World()
    }

    /// A fresh Redis with tenant `acme` (certificate A, KEK `kek-a`, with or without a seed) and its
    /// default policy (hd), and `body` given a factory of independent stores on it.
    func withRedis(seeded: Bool, _ body: (_ newStore: () throws -> RedisLicenseStore) async throws -> Void) async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let newStore = { RedisLicenseStore(client: try RedisClient(configuration: server.configuration())) }
        let store = try newStore()
        try await store.putTenant(
            TenantRecord(
                id: id("acme"), certificateHashes: [world.credentialA.certificateHash], keyEncryptionKeyID: id("kek-a"),
                keySeed: seeded ? try world.keyring.wrap(secret: seed, with: id("kek-a")) : nil))
        try await store.putPolicy(Array(#"{"content-type": "hd"}"#.utf8), tenant: id("acme"), assetID: nil)
        try await body(newStore)
    }

    func issuer(_ store: RedisLicenseStore, now: Int64? = nil) -> PackagerKeyIssuer {
        PackagerKeyIssuer(store: store, keyring: world.keyring, logger: quietLogger, clock: { now ?? LicenseProcessor.currentTimeMilliseconds() })
    }

    func request(
        content: String = "live-1", period: PackagerKeyPeriod? = nil, kid: UInt8 = 0x11, track: String? = "HD", iv: [UInt8]? = nil
    ) throws -> PackagerKeyRequest {
        try PackagerKeyRequest(
            tenant: id("acme"), contentID: content, keyPeriod: period, keyID: [UInt8](repeating: kid, count: 16),
            trackType: try track.map { try IntendedTrackType($0) }, explicitIV: iv)
    }

    /// What the worker sends a device that asks for `uri`: the reply, and the CKC opened.
    func play(_ uri: String, store: RedisLicenseStore, main: Bool = false) async throws -> (status: KSMStatus, opened: OpenedCKC?) {
        let processor = try world.processor(store: store, pool: sharedPool)
        let (job, session) = try World.job("j-\(uri.utf8.count)", device: world.deviceA, World.options(uri, main: main))
        let reply = try #require(await processor.process([job], now: LicenseProcessor.currentTimeMilliseconds()).first)
        return (reply.status, try reply.ckc.map { try CKCOpener.open($0, session: session) })
    }

    @Test("the same request twice gives the same key and IV, with and without a key seed", arguments: [false, true])
    func sameRequestTwice(seeded: Bool) async throws {
        try await withRedis(seeded: seeded) { newStore in
            let issuer = issuer(try newStore())
            let asked = [try request(kid: 0x11), try request(kid: 0x22, track: "AUDIO")]
            let first = try await issuer.issue(asked)
            let second = try await issuer.issue(asked)
            #expect(first == second)
            #expect(first[0].contentKey != first[1].contentKey, "each KID its own key")
            #expect(first.allSatisfy { $0.contentKey.count == 16 && $0.iv.count == 16 })
            #expect(first[0].uri == "skd://live-1/11111111111111111111111111111111")
            #expect(first.allSatisfy { $0.origin == (seeded ? .derivedFromSeed : .stored) })
            if seeded {
                let derived = try ContentKeyDerivation.derive(seed: seed, assetID: first[0].assetID)
                #expect(first[0].contentKey == derived.key && first[0].iv == derived.iv, "docs/key-seeds.md's derivation of the URI")
            }
        }
    }

    @Test("two provider instances racing on one Redis issue identical keys", arguments: [false, true])
    func racingInstancesAgree(seeded: Bool) async throws {
        try await withRedis(seeded: seeded) { newStore in
            let asked = try (0..<6).map { try request(period: try PackagerKeyPeriod(index: 40), kid: UInt8($0), track: $0 == 0 ? "AUDIO" : "HD") }
            let instances = [issuer(try newStore()), issuer(try newStore())]
            let answers = try await withThrowingTaskGroup(of: [IssuedPackagerKey].self) { group in
                for round in 0..<4 {
                    for instance in instances { group.addTask { try await instance.issue(round.isMultiple(of: 2) ? asked : asked.reversed()) } }
                }
                var all: [[IssuedPackagerKey]] = []
                for try await answer in group { all.append(answer.sorted { $0.uri < $1.uri }) }
                return all
            }
            #expect(answers.count == 8)
            #expect(answers.allSatisfy { $0 == answers[0] })
            #expect(Set(answers[0].map(\.contentKey)).count == 6)
        }
    }

    @Test("the worker finds the issued key by the SPC's asset ID and the device opens the CKC with it", arguments: [false, true])
    func workerServesTheIssuedKey(seeded: Bool) async throws {
        try await withRedis(seeded: seeded) { newStore in
            let store = try newStore()
            let issued = try await issuer(store).issue([
                try request(content: "news/eu east", period: try PackagerKeyPeriod(index: 7), kid: 0xA1, track: "HD"),
                try request(content: "movie-42", kid: 0xA2, track: "SD"),
            ])
            #expect(issued[0].uri == "skd://news%2Feu%20east/7/a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1")
            for key in issued {
                let (status, opened) = try await play(key.uri, store: store)
                #expect(status == .ok)
                #expect(opened?.contentKey == key.contentKey && opened?.contentIV == key.iv, "\(key.uri)")
            }
        }
    }

    @Test("the track type's content type reaches the worker: a UHD key needs a Main client with HDCP type 1, an audio key plays")
    func trackTypeSetsTheContentType() async throws {
        try await withRedis(seeded: false) { newStore in
            let store = try newStore()
            let issued = try await issuer(store).issue([try request(kid: 0xB1, track: "UHD1"), try request(kid: 0xB2, track: "STEREO_AUDIO")])
            #expect(issued.map(\.contentType) == [.uhd, .audio])
            #expect(try await play(issued[0].uri, store: store).status != .ok, "a baseline client is refused UHD")
            let main = try await play(issued[0].uri, store: store, main: true)
            #expect(main.status == .ok && main.opened?.contentKey == issued[0].contentKey)
            let read = try await store.fetch([StoreRequest(tenant: id("acme"), account: id("a"), assetID: issued[1].assetID)])
            #expect(try PolicyDocument(json: try #require(read.first?.assetPolicy)).contentType == .audio)
            // An asset policy an operator wrote first is kept.
            let kept = try request(kid: 0xB4, track: "UHD")
            try await store.putPolicy(Array(#"{"content-type": "sd"}"#.utf8), tenant: id("acme"), assetID: kept.assetID)
            _ = try await issuer(store).issue([kept])
            let keptRead = try await store.fetch([StoreRequest(tenant: id("acme"), account: id("a"), assetID: kept.assetID)])
            #expect(try PolicyDocument(json: try #require(keptRead.first?.assetPolicy)).contentType == .sd)
            let video = try request(kid: 0xB3, track: "VIDEO")
            #expect(try await issuer(store).issue([video]).first?.contentType == nil)
            let unset = try await store.fetch([StoreRequest(tenant: id("acme"), account: id("a"), assetID: video.assetID)])
            #expect(unset.first?.assetPolicy == nil, "VIDEO leaves the type to the tenant's policy")
        }
    }

    @Test("an explicit IV is kept: with a seed, the derived key is stored with it, and the worker sends that IV")
    func explicitIVIsKept() async throws {
        try await withRedis(seeded: true) { newStore in
            let store = try newStore()
            let iv = [UInt8](repeating: 0x5C, count: 16)
            let asked = try request(kid: 0xC1, iv: iv)
            let issued = try #require(try await issuer(store).issue([asked]).first)
            let derived = try ContentKeyDerivation.derive(seed: seed, assetID: asked.assetID)
            #expect(issued.iv == iv && issued.contentKey == derived.key && issued.origin == .stored)
            let (status, opened) = try await play(issued.uri, store: store)
            #expect(status == .ok && opened?.contentIV == iv && opened?.contentKey == derived.key)
            // A later request with another IV gets the first one: the key is stored once.
            let later = try #require(try await issuer(store).issue([try request(kid: 0xC1, iv: [UInt8](repeating: 1, count: 16))]).first)
            #expect(later.iv == iv)
        }
    }

    @Test("an unknown tenant is refused, and nothing is written")
    func unknownTenant() async throws {
        try await withRedis(seeded: false) { newStore in
            let store = try newStore()
            let asked = try PackagerKeyRequest(
                tenant: id("nobody"), contentID: "c", keyPeriod: nil, keyID: [UInt8](repeating: 1, count: 16), trackType: nil)
            await #expect(throws: PackagerKeyIssuerError(.unknownTenant, "tenant nobody is not known")) { try await issuer(store).issue([asked]) }
            #expect(try await store.claimContentKeys([ContentKeyClaim(tenant: id("nobody"), assetID: asked.assetID, candidate: nil, policy: nil)]) == [nil])
        }
    }

    @Test("key periods with start and end times write the stream's rotation schedules, per track, and drop the passed ones")
    func rotationFromPeriodTimes() async throws {
        try await withRedis(seeded: true) { newStore in
            let store = try newStore()
            func period(_ index: Int64) throws -> PackagerKeyPeriod {
                try PackagerKeyPeriod(index: index, startMilliseconds: start + (index - 7) * 60_000, endMilliseconds: start + (index - 6) * 60_000)
            }
            func keys(_ index: Int64, now: Int64) async throws -> [IssuedPackagerKey] {
                try await issuer(store, now: now).issue([
                    try request(period: try period(index), kid: UInt8(index), track: "HD"),
                    try request(period: try period(index), kid: UInt8(0x80 + index), track: "AUDIO"),
                ])
            }
            let p7 = try await keys(7, now: start - 30_000)
            #expect(try await store.rotations(tenant: id("acme")).isEmpty, "one period: no next key yet")
            let p8 = try await keys(8, now: start + 10_000)
            let first = try await store.rotations(tenant: id("acme"))
            #expect(
                Set(first) == [
                    RotationSchedule(tenant: id("acme"), assetID: p7[0].assetID, nextAssetID: p8[0].assetID, boundaryMilliseconds: start + 60_000),
                    RotationSchedule(tenant: id("acme"), assetID: p7[1].assetID, nextAssetID: p8[1].assetID, boundaryMilliseconds: start + 60_000),
                ])
            // After the boundary, period 9: its schedule is written, period 7's (passed) is removed.
            let p9 = try await keys(9, now: start + 70_000)
            let second = try await store.rotations(tenant: id("acme"))
            #expect(Set(second.map(\.assetID)) == [p8[0].assetID, p8[1].assetID])
            #expect(second.allSatisfy { $0.boundaryMilliseconds == start + 120_000 })
            #expect(Set(second.map(\.nextAssetID)) == [p9[0].assetID, p9[1].assetID])
            // The worker's prefetch sees the next boundary as due.
            #expect(try await store.dueRotations(from: start + 70_000, through: start + 130_000).count == 2)
        }
    }

    @Test("SPEKE v2.0 periods (index only) write no schedule: no boundary can be known")
    func indexOnlyPeriodsWriteNoSchedule() async throws {
        try await withRedis(seeded: true) { newStore in
            let store = try newStore()
            for index: Int64 in 1...3 {
                _ = try await issuer(store).issue([try request(period: try PackagerKeyPeriod(index: index), kid: UInt8(index))])
            }
            #expect(try await store.rotations(tenant: nil).isEmpty)
        }
    }
}
