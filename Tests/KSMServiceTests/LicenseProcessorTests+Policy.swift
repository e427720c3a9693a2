import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import Licensing
import Testing
import Wire

/// The policy engine through the worker: layers from the store, tokens, lease lifecycle, device
/// limit, end-oldest, rental period, offline dual expiry and sync, explain. The clock is `now`.
extension LicenseProcessorTests {
    /// Adds an asset of tenant acme with its own key and policy document; returns its key.
    func addAsset(_ store: any LicenseStore, _ asset: String, policy json: String) async throws -> [UInt8] {
        let key = FairPlayCrypto.randomBytes(16)
        let wrapped = try world.keyring.wrap(contentKey: key, iv: FairPlayCrypto.randomBytes(16), with: id("kek-a"))
        try await store.putContentKey(wrapped, tenant: id("acme"), assetID: Array(asset.utf8), keyPeriod: nil)
        try await store.putPolicy(Array(json.utf8), tenant: id("acme"), assetID: Array(asset.utf8))
        return key
    }

    static func play(_ session: UInt64, _ state: PlaybackState = .readyToPlay) -> MediaPlaybackInfo {
        MediaPlaybackInfo(creationDate: UInt32(t0 / 1000), state: state, sessionID: session)
    }

    static func token(
        account: String = "alice", asset: String, expiresAt: Int64 = t0 / 1000 + 3600, secret: [UInt8] = World.tokenSecret, policy: PolicyDocument? = nil
    ) -> String {
        EntitlementToken.sign(EntitlementClaims(subject: account, asset: asset, expiresAt: expiresAt, policy: policy), keyID: "k1", secret: secret)
    }

    @Test func entitlementTokensEachFailureHasItsOwnStatus() async throws {
        let store = try await memoryStore()
        let asset = "skd://acme/premium"
        _ = try await addAsset(store, asset, policy: #"{"entitlement-required": true}"#)
        let processor = try world.processor(store: store, pool: sharedPool)
        let opts = World.options(asset)
        let cases: [(String, String, KSMStatus, String)] = [
            ("t-ok", Self.token(asset: asset), .ok, "policy:granted"),
            ("t-missing", "", .tokenMissing, "token:missing"),
            ("t-sig", Self.token(asset: asset, secret: [UInt8](repeating: 1, count: 32)), .tokenBadSignature, "token:bad-signature"),
            ("t-exp", Self.token(asset: asset, expiresAt: t0 / 1000 - 1), .tokenExpired, "token:expired"),
            ("t-asset", Self.token(asset: "skd://acme/other"), .tokenWrongAsset, "token:wrong-asset"),
            ("t-account", Self.token(account: "mallory", asset: asset), .tokenWrongAccount, "token:wrong-account"),
            ("t-junk", "not.a.token", .tokenMalformed, "token:malformed"),
        ]
        let jobs = try cases.map { c in try World.job(c.0, device: world.deviceA, opts, entitlement: c.1) }
        let replies = await processor.process(jobs.map(\.job), now: t0)
        for (reply, c) in zip(replies, cases) {
            #expect(reply.status == c.2, "\(c.0): \(reply.status) \(reply.reason)")
            #expect(reply.rule == c.3, "\(c.0)")
            #expect(reply.reason.contains(World.tokenSecret.hexString) == false)
        }
        #expect(try CKCOpener.open(try #require(replies[0].ckc), session: jobs[0].session).contentKey.count == 16)

        // A verified token's policy claim is the top layer: here it leases the key for 60 s.
        let leasing = try World.job(
            "t-lease", device: world.deviceA, World.options(asset, playback: Self.play(1)),
            entitlement: Self.token(asset: asset, policy: PolicyDocument(lease: .init(durationSeconds: 60))))
        let leased = try #require(await processor.process([leasing.job], now: t0).first)
        #expect(leased.status == .ok && leased.rule == "lease:granted" && leased.leaseExpiresAt == t0 + 60_000, "\(leased.reason)")
    }

    @Test func leaseLifecycleStatesOneTwoThreeAndExpiry() async throws {
        let memory = try await memoryStore()
        let store = ScriptedStore(memory)
        let asset = "skd://acme/live-event"
        let key = try await addAsset(memory, asset, policy: #"{"lease": {"duration": 120}, "max-streams": 1}"#)
        let processor = try world.processor(store: store, pool: sharedPool)
        let phone = SimulatedDevice(trust: world.trustA)
        let tablet = SimulatedDevice(trust: world.trustA)

        let start = try World.job("s1", device: phone, World.options(asset, playback: Self.play(5)))
        let first = try #require(await processor.process([start.job], now: t0).first)
        #expect(first.status == .ok && first.rule == "lease:granted" && first.leaseExpiresAt == t0 + 120_000)
        let opened = try CKCOpener.open(try #require(first.ckc), session: start.session)
        #expect(opened.contentKey == key && opened.keyDuration == .lease(120))

        // State 2: a duration answer without a content key, the slot renewed.
        let playing = try World.job("s2", device: phone, World.options(asset, playback: Self.play(5, .playingOrPaused)))
        let second = try #require(await processor.process([playing.job], now: t0 + 30_000).first)
        #expect(second.status == .ok && second.rule == "playback:duration-only", "\(second.reason)")
        let noKey = try CKCOpener.open(try #require(second.ckc), session: playing.session)
        #expect(noKey.contentKey.isEmpty || noKey.contentKey.allSatisfy { $0 == 0 } || noKey.contentKey != key)

        // The account is full: another device is refused.
        let other = try World.job("o1", device: tablet, World.options(asset, playback: Self.play(6)))
        let refused = try #require(await processor.process([other.job], now: t0 + 40_000).first)
        #expect(refused.status == .tooManyStreams && refused.rule == "lease:too-many-streams")

        // State 3 renews before expiry.
        let renew = try World.job("s3", device: phone, World.options(asset, playback: Self.play(5, .leaseRenewal)))
        let renewed = try #require(await processor.process([renew.job], now: t0 + 100_000).first)
        #expect(renewed.status == .ok && renewed.rule == "lease:renewed" && renewed.leaseExpiresAt == t0 + 220_000)

        // Expiry frees the slot for the other device.
        let later = try World.job("o2", device: tablet, World.options(asset, playback: Self.play(6)))
        let admitted = try #require(await processor.process([later.job], now: t0 + 220_001).first)
        #expect(admitted.status == .ok && admitted.rule == "lease:granted", "\(admitted.reason)")
        #expect(store.leaseCalls == 5, "one write per batch that needs one")
    }

    @Test func endOldestRefusesTheOldStreamsNextRenewal() async throws {
        let store = try await memoryStore()
        let asset = "skd://acme/one-screen"
        _ = try await addAsset(store, asset, policy: #"{"lease": {"duration": 300}, "max-streams": 1, "when-full": "end-oldest"}"#)
        let processor = try world.processor(store: store, pool: sharedPool)
        let old = SimulatedDevice(trust: world.trustA)
        let new = SimulatedDevice(trust: world.trustA)
        let a = try World.job("e1", device: old, World.options(asset, playback: Self.play(1)))
        let b = try World.job("e2", device: new, World.options(asset, playback: Self.play(2)))
        #expect(await processor.process([a.job], now: t0).first?.status == .ok)
        let second = try #require(await processor.process([b.job], now: t0 + 1000).first)
        #expect(second.status == .ok && second.reason.contains("ended"), "\(second.reason)")
        let renew = try World.job("e3", device: old, World.options(asset, playback: Self.play(1, .leaseRenewal)))
        let refused = try #require(await processor.process([renew.job], now: t0 + 2000).first)
        #expect(refused.status == .streamEnded && refused.rule == "lease:ended-by-newer-stream")
    }

    @Test func deviceLimitRegistersUpToTheLimit() async throws {
        let store = try await memoryStore()
        let asset = "skd://acme/family"
        _ = try await addAsset(store, asset, policy: #"{"device-limit": 2}"#)
        let processor = try world.processor(store: store, pool: sharedPool)
        let devices = (0..<3).map { _ in SimulatedDevice(trust: world.trustA) }
        let jobs = try devices.enumerated().map { n, d in try World.job("d\(n)", device: d, World.options(asset)).job }
        // The same batch: the store decides in order, atomically per job.
        let replies = await processor.process(jobs, now: t0)
        #expect(replies.map(\.status) == [.ok, .ok, .deviceLimitReached], "\(replies.map(\.reason))")
        #expect(replies[2].rule == "device-limit:reached" && replies[2].reason.contains("2 of 2"))
        // A registered device keeps working; another account is separate.
        let again = try World.job("d0-again", device: devices[0], World.options(asset)).job
        let bob = try World.job("bob-d2", account: "bob", device: devices[2], World.options(asset)).job
        #expect(await processor.process([again, bob], now: t0 + 1).map(\.status) == [.ok, .ok])
        #expect(store.accountRecords(tenant: id("acme"), account: id("alice")).devices.count == 2)
    }

    @Test func rentalPeriodStartsWithTheFirstLicense() async throws {
        let store = try await memoryStore()
        let asset = "skd://acme/rental"
        _ = try await addAsset(store, asset, policy: #"{"rental": {"duration": 172800}, "persistence": "rental-duration"}"#)
        let processor = try world.processor(store: store, pool: sharedPool)
        let first = try World.job("r1", device: world.deviceA, World.options(asset, playback: Self.play(1)))
        let reply = try #require(await processor.process([first.job], now: t0).first)
        #expect(reply.status == .ok && reply.rule == "rental:granted")
        #expect(try CKCOpener.open(try #require(reply.ckc), session: first.session).keyDuration == .rental(172_800))
        // 47 hours later: one hour left, counted from the first license.
        let later = try World.job("r2", device: world.deviceA, World.options(asset, playback: Self.play(1)))
        let second = try #require(await processor.process([later.job], now: t0 + 47 * 3_600_000).first)
        #expect(try CKCOpener.open(try #require(second.ckc), session: later.session).keyDuration == .rental(3600))
        // A download is limited to what is left.
        let download = try World.job("r3", device: world.deviceA, World.options(asset, playback: Self.play(1)), persistent: true)
        let kept = try #require(await processor.process([download.job], now: t0 + 47 * 3_600_000).first)
        #expect(kept.rule == "persistence:limited-by-rental")
        #expect(try CKCOpener.open(try #require(kept.ckc), session: download.session).keyDuration == .persistable(limitedTo: 3600))
        // After 48 hours a new playback is refused.
        let late = try World.job("r4", device: world.deviceA, World.options(asset, playback: Self.play(1)))
        let over = try #require(await processor.process([late.job], now: t0 + 49 * 3_600_000).first)
        #expect(over.status == .rentalPeriodOver && over.rule == "rental:period-over")
    }

    @Test func offlineDownloadThenSyncInvalidates() async throws {
        let store = try await memoryStore()
        let asset = "skd://acme/offline"
        let key = try await addAsset(store, asset, policy: #"{"offline": {"enabled": true, "storage-duration": 2592000, "playback-duration": 86400}}"#)
        let processor = try world.processor(store: store, pool: sharedPool)
        let stream: [UInt8] = Array(repeating: 0xAB, count: 16)
        let download = try World.job("dl", device: world.deviceA, World.options(asset, playback: Self.play(1)), persistent: true, streamID: stream)
        let reply = try #require(await processor.process([download.job], now: t0).first)
        #expect(reply.status == .ok && reply.rule == "offline:dual-expiry", "\(reply.reason)")
        let opened = try CKCOpener.open(try #require(reply.ckc), session: download.session)
        #expect(opened.contentKey == key && opened.keyDuration == nil)
        let offline = try #require(opened.offlineKey)
        #expect(offline.version == 2 && offline.contentID == stream && offline.storageDuration == 2_592_000 && offline.playbackDuration == 86_400)

        // A client without capability bit 3 gets the storage duration as a persistable key, as SDK 26
        // answers it (OfflineWorkerPathTests covers every combination of bits 1 and 3).
        var plain = World.options(asset, playback: Self.play(1))
        plain.capabilities = Capabilities(low: Capabilities.securityLevelBaselineBit | Capabilities.hdcpEnforcementBit)
        let old = try World.job("dl-old", device: world.deviceA, plain, persistent: true)
        let persistable = try #require(await processor.process([old.job], now: t0).first)
        #expect(persistable.status == .ok && persistable.rule == "offline:persistable", "\(persistable.reason)")
        #expect(try CKCOpener.open(try #require(persistable.ckc), session: old.session).keyDuration == .persistable(limitedTo: 2_592_000))

        // Days later the device deletes the key: a sync SPC with secure invalidation.
        var sync = World.options(asset, playback: Self.play(1))
        sync.sync = .v2(
            SyncV2(
                serverChallenge: 0, flags: [.secureInvalidation, .success], titleID: offline.titleID ?? [], durationToExpiry: 0, invalidatedStreamIDs: [stream])
        )
        var syncJob = try World.job("sync", device: world.deviceA, sync)
        syncJob.job.checkIn = true
        let checkIn = try #require(await processor.process([syncJob.job], now: t0 + 3 * 86_400_000).first)
        #expect(checkIn.status == .ok && checkIn.rule == "sync:check-in", "\(checkIn.reason)")
        #expect(checkIn.ckc == nil)
        #expect(checkIn.reason.contains("1 stream ID(s) invalidated"), "\(checkIn.reason)")
        #expect(store.accountRecords(tenant: id("acme"), account: id("alice")).invalidated == [stream])
    }

    @Test func explainDecidesWithoutTakingAnything() async throws {
        let store = try await memoryStore()
        let processor = try world.processor(store: store, pool: sharedPool)
        let job = try World.job("x1", device: world.deviceA, World.options(World.liveAsset, playback: Self.play(3)))
        let explanation = await processor.explain(job.job, now: t0)
        #expect(explanation.status == .ok && explanation.rule == "lease:granted")
        #expect(explanation.evaluation?.policy?.origins["lease.duration"] == .asset)
        #expect(explanation.evaluation?.policy?.origins["content-type"] == .tenant)
        #expect(explanation.evaluation?.write?.slot == .acquireOrRenew)
        let text = String(decoding: explanation.jsonValue.encoded(), as: UTF8.self)
        #expect(text.contains(#""lease.duration":{"layer":"asset","value":"600"}"#), "\(text)")
        #expect(try await store.listSlots(tenant: id("acme"), account: id("alice"), nowMilliseconds: t0).isEmpty)
    }

    /// The store's renewal shortcut (docs/redis.md) is tried only for sessions that say they hold a
    /// slot: playback state 3, and state 2 while the policy allows renewal; never for a new session.
    @Test(arguments: [(PlaybackState.readyToPlay, false), (.playingOrPaused, true), (.leaseRenewal, true)])
    func writeSaysWhenTheSessionExpectsALiveSlot(state: PlaybackState, expected: Bool) async throws {
        let store = try await memoryStore()
        let processor = try world.processor(store: store, pool: sharedPool)
        let job = try World.job("hint", device: world.deviceA, World.options(World.liveAsset, playback: Self.play(7, state)))
        let write = try #require(await processor.explain(job.job, now: t0).evaluation?.write)
        #expect(write.slot == .acquireOrRenew)
        #expect(write.expectsLiveSlot == expected)
    }
}
