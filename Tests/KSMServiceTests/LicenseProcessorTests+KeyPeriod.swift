import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import Licensing
import Testing

/// The job's `key-period` and `server-challenge` fields through the processor.
extension LicenseProcessorTests {
    @Test("a job's key period selects that period's stored key; without one the asset's single key")
    func keyPeriodSelectsThePeriodsKey() async throws {
        let store = try await memoryStore()
        let asset = "skd://acme/live-rotating"
        let base = try await addAsset(store, asset, policy: #"{"content-type": "hd"}"#)
        let periodKey = FairPlayCrypto.randomBytes(16)
        let wrapped = try world.keyring.wrap(contentKey: periodKey, iv: FairPlayCrypto.randomBytes(16), with: id("kek-a"))
        try await store.putContentKey(wrapped, tenant: id("acme"), assetID: Array(asset.utf8), keyPeriod: id("p7"))
        let processor = try world.processor(store: store, pool: sharedPool)

        var period = try World.job("kp1", device: world.deviceA, World.options(asset))
        period.job.keyPeriod = id("p7")
        let plain = try World.job("kp2", device: world.deviceA, World.options(asset))
        var missing = try World.job("kp3", device: world.deviceA, World.options(asset))
        missing.job.keyPeriod = id("p8")
        let replies = await processor.process([period.job, plain.job, missing.job], now: t0)
        #expect(replies.map(\.status) == [.ok, .ok, .noContentKey], "\(replies.map(\.reason))")
        let periodCKC = try #require(replies[0].ckc)
        let plainCKC = try #require(replies[1].ckc)
        #expect(try CKCOpener.open(periodCKC, session: period.session).contentKey == periodKey)
        #expect(try CKCOpener.open(plainCKC, session: plain.session).contentKey == base)
    }

    @Test("a sync SPC must carry the job's server challenge; nothing is recorded when it does not")
    func syncServerChallengeIsChecked() async throws {
        let store = try await memoryStore()
        let asset = "skd://acme/offline-challenge"
        _ = try await addAsset(store, asset, policy: #"{"offline": {"enabled": true, "storage-duration": 2592000, "playback-duration": 86400}}"#)
        let processor = try world.processor(store: store, pool: sharedPool)
        let stream: [UInt8] = Array(repeating: 0xCD, count: 16)
        let download = try World.job(
            "dl-c", device: world.deviceA, World.options(asset, playback: LicenseProcessorTests.play(1)), persistent: true, streamID: stream)
        let issued = try #require(await processor.process([download.job], now: t0).first)
        #expect(issued.status == .ok, "\(issued.reason)")
        let issuedCKC = try #require(issued.ckc)
        let offline = try #require(try CKCOpener.open(issuedCKC, session: download.session).offlineKey)

        var options = World.options(asset, playback: LicenseProcessorTests.play(1))
        options.sync = .v2(
            SyncV2(
                serverChallenge: 0x0123_4567_89AB_CDEF, flags: [.secureInvalidation, .success],
                titleID: offline.titleID ?? [], durationToExpiry: 0, invalidatedStreamIDs: [stream]))
        var wrong = try World.job("sync-wrong", device: world.deviceA, options)
        wrong.job.serverChallenge = 0x0123_4567_89AB_CDEE
        wrong.job.checkIn = true
        let refused = try #require(await processor.process([wrong.job], now: t0 + 1_000).first)
        #expect(refused.status == .syncChallengeMismatch, "\(refused.status) \(refused.rule) \(refused.reason)")
        #expect(refused.rule == "sync:challenge-mismatch")
        #expect(store.accountRecords(tenant: id("acme"), account: id("alice")).invalidated.isEmpty)

        var right = try World.job("sync-right", device: world.deviceA, options)
        right.job.serverChallenge = 0x0123_4567_89AB_CDEF
        right.job.checkIn = true
        let accepted = try #require(await processor.process([right.job], now: t0 + 2_000).first)
        #expect(accepted.status == .ok && accepted.rule == "sync:check-in", "\(accepted.reason)")
        #expect(store.accountRecords(tenant: id("acme"), account: id("alice")).invalidated == [stream])
    }

    @Test("key-period and server-challenge survive the job's JSON round trip and are checked on decode")
    func jobFieldsRoundTrip() throws {
        var job = LicenseJob(id: id("j"), tenant: id("acme"), account: id("a"), spc: [1, 2, 3])
        job.keyPeriod = id("2026-11-22T01")
        job.serverChallenge = 0x00AB
        let decoded = try LicenseJob(json: job.jsonBytes())
        #expect(decoded.keyPeriod == id("2026-11-22T01") && decoded.serverChallenge == 0x00AB)
        #expect(String(decoding: job.jsonBytes(), as: UTF8.self).contains(#""server-challenge":"00000000000000ab""#))
        let bad = Array(#"{"id":"j","tenant":"t","account":"a","spc":"AQID","server-challenge":"xyz"}"#.utf8)
        #expect(throws: LicenseJobError.self) { try LicenseJob(json: bad) }
        let badPeriod = Array(#"{"id":"j","tenant":"t","account":"a","spc":"AQID","key-period":"has space"}"#.utf8)
        #expect(throws: LicenseJobError.self) { try LicenseJob(json: badPeriod) }
    }
}
