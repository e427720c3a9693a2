import FairPlay
import Licensing
import Testing

@Suite("Policy lifecycles with a controllable clock")
struct PolicyLifecycleTests {
    let device: [UInt8] = Array(repeating: 0xaa, count: 20)

    @Test("live event lease: state 1 acquires, state 2 answers a duration without a key, state 3 renews, an unrenewed lease frees its slot")
    func leaseLifecycle() throws {
        var clock = TestClock()
        let p = try policy(#"{"content-type": "hd", "lease": {"duration": 120}, "max-streams": 1}"#)
        var slots: [ActiveStream] = []

        let start = evaluate(p, client(state: .readyToPlay, session: 1), now: clock.now)
        #expect(start.rule == "lease:granted")
        #expect(start.terms?.duration == .lease(seconds: 120))
        #expect(start.terms?.leaseSlot == .acquire(seconds: 120))
        let admitted = StreamLimit.decide(
            device: device, session: 1, need: .acquire(seconds: 120), active: slots, limit: p.maxStreams, whenFull: p.whenFull, nowMilliseconds: clock.now)
        #expect(admitted == .admit(expiresAt: clock.now + 120_000, ending: nil))
        slots = [ActiveStream(deviceID: device, sessionID: 1, startedAt: clock.now, expiresAt: clock.now + 120_000)]

        clock.advance(seconds: 60)
        let playing = evaluate(p, client(state: .playingOrPaused, session: 1), now: clock.now)
        #expect(playing.rule == "playback:duration-only")
        #expect(playing.terms?.includesContentKey == false)
        #expect(playing.terms?.duration == .lease(seconds: 120))

        clock.advance(seconds: 50)
        let renewal = evaluate(p, client(state: .leaseRenewal, session: 1), now: clock.now)
        #expect(renewal.rule == "lease:renewed")
        #expect(renewal.terms?.includesContentKey == true)
        let renewed = StreamLimit.decide(
            device: device, session: 1, need: .renew(seconds: 120), active: slots, limit: p.maxStreams, whenFull: p.whenFull, nowMilliseconds: clock.now)
        #expect(renewed == .renew(expiresAt: clock.now + 120_000))
        slots[0].expiresAt = clock.now + 120_000

        // A second stream of the account is refused while the first holds its slot...
        let second = StreamLimit.decide(
            device: device, session: 2, need: .acquire(seconds: 120), active: slots, limit: p.maxStreams, whenFull: p.whenFull, nowMilliseconds: clock.now)
        #expect(second.refusal == .tooManyStreams)
        // ...and admitted once the first lease ran out unrenewed.
        clock.advance(seconds: 120)
        let later = StreamLimit.decide(
            device: device, session: 2, need: .acquire(seconds: 120), active: slots, limit: p.maxStreams, whenFull: p.whenFull, nowMilliseconds: clock.now)
        #expect(later == .admit(expiresAt: clock.now + 120_000, ending: nil))
    }

    @Test("renewal not allowed: state 2 holds the slot as it is, state 3 is refused")
    func noRenewal() throws {
        let clock = TestClock()
        let p = try policy(#"{"content-type": "hd", "lease": {"duration": 300, "renewal": false}}"#)
        #expect(evaluate(p, client(state: .playingOrPaused), now: clock.now).terms?.leaseSlot == .hold)
        #expect(evaluate(p, client(state: .leaseRenewal), now: clock.now).refusal == .leaseRenewalNotAllowed)
        let slot = ActiveStream(deviceID: device, sessionID: 7, startedAt: clock.now, expiresAt: clock.now + 100_000)
        #expect(
            StreamLimit.decide(device: device, session: 7, need: .hold, active: [slot], limit: .unlimited, whenFull: .refuseNew, nowMilliseconds: clock.now)
                == .hold(expiresAt: clock.now + 100_000))
        #expect(
            StreamLimit.decide(device: device, session: 7, need: .hold, active: [], limit: .unlimited, whenFull: .refuseNew, nowMilliseconds: clock.now).refusal
                == .leaseRenewalNotAllowed)
    }

    @Test("rental window: refused before, keys bounded by the window inside it, refused from not-after on")
    func rentalWindow() throws {
        var clock = TestClock()
        let opens = clock.now + 3_600_000
        let closes = opens + 7_200_000
        let p = try policy(#"{"content-type": "hd", "rental": {"not-before": \#(opens), "not-after": \#(closes)}, "lease": {"duration": 120}}"#)
        #expect(evaluate(p, client(state: .readyToPlay), now: clock.now).refusal == .rentalNotYetValid)
        clock.now = opens
        #expect(evaluate(p, client(state: .readyToPlay), now: clock.now).terms?.duration == .leaseAndRental(lease: 120, rental: 7200))
        clock.now = closes - 1500
        #expect(evaluate(p, client(state: .leaseRenewal), now: clock.now).terms?.duration == .leaseAndRental(lease: 120, rental: 2))
        clock.now = closes
        #expect(evaluate(p, client(state: .leaseRenewal), now: clock.now).refusal == .rentalExpired)
    }

    @Test(
        "48-hour rental: the first license starts it, later ones count down, a new playback after it is refused, one already playing continues under its lease")
    func rentalPeriod() throws {
        var clock = TestClock()
        let p = try policy(#"{"content-type": "hd", "rental": {"duration": 172800}, "lease": {"duration": 600}}"#)
        let first = evaluate(p, client(state: .readyToPlay), now: clock.now)
        #expect(first.terms?.startsRental == true)
        #expect(first.terms?.duration == .leaseAndRental(lease: 600, rental: 172_800))
        let started = clock.now
        clock.advance(seconds: 36 * 3600)
        let again = evaluate(p, client(state: .readyToPlay), now: clock.now, rentalStart: started)
        #expect(again.terms?.startsRental == false)
        #expect(again.terms?.duration == .leaseAndRental(lease: 600, rental: 12 * 3600))
        clock.advance(seconds: 12 * 3600)
        #expect(evaluate(p, client(state: .readyToPlay), now: clock.now, rentalStart: started).refusal == .rentalPeriodOver)
        #expect(evaluate(p, client(state: .leaseRenewal), now: clock.now, rentalStart: started).terms?.duration == .lease(seconds: 600))
    }

    @Test("48-hour rental download: a persistable key limited to what is left of the rental")
    func rentalDownload() throws {
        var clock = TestClock()
        let p = try policy(#"{"content-type": "hd", "rental": {"duration": 172800}, "persistence": "rental-duration"}"#)
        #expect(evaluate(p, client(), now: clock.now, download: true).terms?.duration == .persistableLimited(seconds: 172_800))
        let started = clock.now
        clock.advance(seconds: 1000)
        #expect(evaluate(p, client(), now: clock.now, download: true, rentalStart: started).terms?.duration == .persistableLimited(seconds: 171_800))
        let unlimited = try policy(#"{"content-type": "hd", "persistence": "unlimited"}"#)
        #expect(evaluate(unlimited, client(), download: true).terms?.duration == .persistableUnlimited)
        #expect(evaluate(unlimited, client(), download: true).rule == "persistence:unlimited")
    }

    @Test(
        "offline download: dual expiry (offline key v2) for capability bit 3, a persistable duration for bit 1 alone, storage bounded by the window, then recorded and synced"
    )
    func offlineDualExpiryAndSync() throws {
        var clock = TestClock()
        let p = try policy(#"{"content-type": "hd", "offline": {"enabled": true, "storage-duration": 2592000, "playback-duration": 86400}}"#)
        let v2 = evaluate(p, client(caps: Caps.offline | Caps.offlineV2, state: .readyToPlay), now: clock.now, download: true)
        #expect(v2.terms?.duration == .dualExpiry(storage: 2_592_000, playback: 86400, offlineKeyVersion: 2))
        #expect(v2.terms?.duration.contentKeyDuration == nil)
        // SDK 26 reads bit 1 as dual expiry support, which sends no offline key TLLV.
        let bit1 = evaluate(p, client(caps: Caps.offline, state: .readyToPlay), now: clock.now, download: true)
        #expect(bit1.terms?.duration == .persistableLimited(seconds: 2_592_000))
        #expect(bit1.rule == "offline:persistable")
        let stream: [UInt8] = Array(repeating: 1, count: 16)
        let title: [UInt8] = Array(repeating: 2, count: 16)
        #expect(bit1.terms?.duration.offlineKey(streamID: stream, titleID: title) == nil)
        #expect(v2.terms?.duration.offlineKey(streamID: stream, titleID: title)?.titleID == title)
        let bit1Terms = try #require(bit1.terms)
        #expect(
            OfflineLicenseRecord.issued(terms: bit1Terms, streamID: stream, titleID: title, assetID: "movie", deviceID: device, nowMilliseconds: clock.now)
                == nil)

        let windowed = try policy(
            #"{"content-type": "hd", "rental": {"not-after": \#(clock.now + 86_400_000)}, "offline": {"enabled": true, "storage-duration": 2592000, "playback-duration": 86400}}"#
        )
        #expect(
            evaluate(windowed, client(state: .readyToPlay), now: clock.now, download: true).terms?.duration
                == .dualExpiry(storage: 86400, playback: 86400, offlineKeyVersion: 2))

        let terms = try #require(v2.terms)
        let record = try #require(
            OfflineLicenseRecord.issued(terms: terms, streamID: stream, titleID: title, assetID: "movie", deviceID: device, nowMilliseconds: clock.now))
        #expect(record.storageDeadline == clock.now + 2_592_000_000)
        #expect(
            OfflineLicenseRecord.issued(
                terms: LicenseTerms(includesContentKey: true, duration: .lease(seconds: 1), hdcp: .type0, requiredSecurityLevel: .baseline), streamID: stream,
                titleID: title, assetID: "m", deviceID: device, nowMilliseconds: 0) == nil)

        clock.advance(seconds: 86400)
        let report = SyncRequest.v2(
            SyncV2(serverChallenge: 5, flags: [.report, .success], titleID: title, durationToExpiry: 2_505_600, invalidatedStreamIDs: []))
        let synced = OfflineSync.apply(report, deviceID: device, records: [record], expectedChallenge: 5, nowMilliseconds: clock.now)
        #expect(synced.actions == [.report])
        #expect(synced.challengeMatches == true)
        #expect(synced.updated.first?.reportedExpiresAt == clock.now + 2_505_600_000)
        #expect(synced.updated.first?.state == .active)

        clock.advance(seconds: 60)
        let delete = SyncRequest.v2(
            SyncV2(serverChallenge: 6, flags: [.secureInvalidation, .success], titleID: title, durationToExpiry: 0, invalidatedStreamIDs: [stream]))
        let gone = OfflineSync.apply(delete, deviceID: device, records: synced.updated, expectedChallenge: 5, nowMilliseconds: clock.now)
        #expect(gone.challengeMatches == false)
        #expect(gone.invalidatedStreamIDs == [stream])
        #expect(gone.updated.first?.state == .invalidated(at: clock.now))
    }

    @Test("end-oldest: the new stream is admitted, the oldest is marked ended and its next renewal refused")
    func endOldest() throws {
        let clock = TestClock()
        let a = ActiveStream(deviceID: [1], sessionID: 1, startedAt: clock.now - 500_000, expiresAt: clock.now + 60_000)
        let b = ActiveStream(deviceID: [2], sessionID: 2, startedAt: clock.now - 100_000, expiresAt: clock.now + 60_000)
        let d = StreamLimit.decide(
            device: [3], session: 3, need: .acquire(seconds: 60), active: [b, a], limit: .maximum(2), whenFull: .endOldest, nowMilliseconds: clock.now)
        #expect(d == .admit(expiresAt: clock.now + 60_000, ending: a))
        var ended = a
        ended.ended = true
        let renewal = StreamLimit.decide(
            device: [1], session: 1, need: .renew(seconds: 60), active: [ended, b], limit: .maximum(2), whenFull: .endOldest, nowMilliseconds: clock.now)
        #expect(renewal.refusal == .streamEnded)
        #expect(renewal.refusal?.rule == "lease:ended-by-newer-stream")
    }
}
