import FairPlay
import Licensing
import Testing

@Suite("Offline sync bookkeeping and device limits")
struct OfflineSyncAndLimitTests {
    let device: [UInt8] = Array(repeating: 0xd1, count: 20)
    let other: [UInt8] = Array(repeating: 0xd2, count: 20)
    let title: [UInt8] = Array(repeating: 0x77, count: 16)
    func id(_ n: UInt8) -> [UInt8] { Array(repeating: n, count: 16) }

    func records() -> [OfflineLicenseRecord] {
        [
            OfflineLicenseRecord(streamID: id(1), titleID: title, assetID: "m/1", deviceID: device, issuedAt: 0, storageSeconds: 100, playbackSeconds: 10),
            OfflineLicenseRecord(streamID: id(2), titleID: title, assetID: "m/2", deviceID: device, issuedAt: 0, storageSeconds: 100, playbackSeconds: 10),
            OfflineLicenseRecord(streamID: id(3), titleID: id(9), assetID: "n", deviceID: device, issuedAt: 0, storageSeconds: 100, playbackSeconds: 10),
            OfflineLicenseRecord(streamID: id(4), titleID: title, assetID: "m/1", deviceID: other, issuedAt: 0, storageSeconds: 100, playbackSeconds: 10),
        ]
    }

    @Test(
        "v1 report updates the one content ID of this device; 0 means expired, 0xFFFFFFFF no expiry",
        arguments: [
            (UInt32(50), Int64?.some(1_050_000), OfflineLicenseRecord.State.active),
            (0, 1_000_000, .expired),
            (.max, nil, .active),
        ])
    func v1Report(duration: UInt32, expires: Int64?, state: OfflineLicenseRecord.State) {
        let out = OfflineSync.apply(.v1(SyncV1(contentID: id(1), durationToExpiry: duration)), deviceID: device, records: records(), nowMilliseconds: 1_000_000)
        #expect(out.actions == [.report])
        #expect(out.updated.count == 1)
        #expect(out.updated.first?.streamID == id(1))
        #expect(out.updated.first?.reportedExpiresAt == expires)
        #expect(out.updated.first?.state == state)
        #expect(out.updated.first?.lastSyncAt == 1_000_000)
    }

    @Test("v1 report of a content ID this device never got is reported as unknown and changes nothing")
    func v1Unknown() {
        let out = OfflineSync.apply(.v1(SyncV1(contentID: id(4), durationToExpiry: 5)), deviceID: device, records: records(), nowMilliseconds: 1)
        #expect(out.updated.isEmpty)
        #expect(out.unknownStreamIDs == [id(4)])
    }

    @Test("v2 report covers every license of the title on this device only")
    func v2ReportTitle() {
        let sync = SyncRequest.v2(SyncV2(serverChallenge: 1, flags: [.report], titleID: title, durationToExpiry: 9, invalidatedStreamIDs: []))
        let out = OfflineSync.apply(sync, deviceID: device, records: records(), nowMilliseconds: 0)
        #expect(out.updated.map(\.streamID) == [id(1), id(2)])
        #expect(out.challengeMatches == nil)
    }

    @Test("secure invalidation marks the listed streams and keeps unknown listed IDs as invalidated")
    func secureInvalidation() {
        let sync = SyncRequest.v2(
            SyncV2(serverChallenge: 1, flags: [.secureInvalidation, .success], titleID: title, durationToExpiry: 0, invalidatedStreamIDs: [id(2), id(8)]))
        let out = OfflineSync.apply(sync, deviceID: device, records: records(), nowMilliseconds: 42)
        #expect(out.actions == [.secureInvalidation])
        #expect(out.updated.map(\.streamID) == [id(2)])
        #expect(out.updated.first?.state == .invalidated(at: 42))
        #expect(Set(out.invalidatedStreamIDs) == [id(2), id(8)])
        #expect(out.unknownStreamIDs == [id(8)])
        #expect(out.deviceReportedSuccess)
    }

    @Test("secure invalidation with no list invalidates the whole title when the device reports success, nothing otherwise")
    func titleInvalidation() {
        let ok = OfflineSync.apply(
            .v2(SyncV2(serverChallenge: 0, flags: [.secureInvalidation, .success], titleID: title, durationToExpiry: 0, invalidatedStreamIDs: [])),
            deviceID: device, records: records(), nowMilliseconds: 1)
        #expect(Set(ok.invalidatedStreamIDs) == [id(1), id(2)])
        let failed = OfflineSync.apply(
            .v2(SyncV2(serverChallenge: 0, flags: [.secureInvalidation], titleID: title, durationToExpiry: 0, invalidatedStreamIDs: [])), deviceID: device,
            records: records(), nowMilliseconds: 1)
        #expect(failed.invalidatedStreamIDs.isEmpty)
    }

    @Test("invalidate all removes every license of this device and none of another device")
    func invalidateAll() {
        let out = OfflineSync.apply(
            .v2(SyncV2(serverChallenge: 0, flags: [.secureInvalidationAll, .success], titleID: title, durationToExpiry: 0, invalidatedStreamIDs: [])),
            deviceID: device, records: records(), nowMilliseconds: 5)
        #expect(out.actions == [.invalidateAll])
        #expect(Set(out.invalidatedStreamIDs) == [id(1), id(2), id(3)])
        #expect(out.updated.allSatisfy { $0.deviceID == device && $0.state == .invalidated(at: 5) })
    }

    @Test("object not found and object expired mark the title's active licenses")
    func deviceResults() {
        let nf = OfflineSync.apply(
            .v2(SyncV2(serverChallenge: 0, flags: [.objectNotFound], titleID: title, durationToExpiry: 0, invalidatedStreamIDs: [])), deviceID: device,
            records: records(), nowMilliseconds: 0)
        #expect(nf.updated.map(\.state) == [.notFoundOnDevice, .notFoundOnDevice])
        let ex = OfflineSync.apply(
            .v2(SyncV2(serverChallenge: 0, flags: [.objectExpired], titleID: title, durationToExpiry: 0, invalidatedStreamIDs: [])), deviceID: device,
            records: records(), nowMilliseconds: 0)
        #expect(ex.updated.map(\.state) == [.expired, .expired])
    }

    @Test(
        "device limit: a known device passes, a new one registers while there is room, then is refused",
        arguments: [
            (Set<[UInt8]>(), PolicyLimit.maximum(1), DeviceLimitDecision.register),
            (Set<[UInt8]>([[1]]), .maximum(1), .alreadyRegistered),
            (Set<[UInt8]>([[2]]), .maximum(1), .refused(registered: 1, limit: .maximum(1))),
            (Set<[UInt8]>([[2], [3]]), .maximum(3), .register),
            (Set<[UInt8]>([[2], [3], [4]]), .unlimited, .register),
        ])
    func deviceLimit(registered: Set<[UInt8]>, limit: PolicyLimit, expected: DeviceLimitDecision) {
        let d = DeviceLimit.decide(device: [1], registered: registered, limit: limit)
        #expect(d == expected)
        #expect((d.refusal == .deviceLimitReached) == (expected.refusal != nil))
    }

    @Test("the engine asks for device registration only when the policy limits devices")
    func engineRegistersDevices() throws {
        #expect(evaluate(try policy(#"{"content-type": "hd", "device-limit": 2}"#), client()).terms?.registersDevice == true)
        #expect(evaluate(try policy(#"{"content-type": "hd"}"#), client()).terms?.registersDevice == false)
    }

    @Test("stream limit: the same session asking again takes no second slot, expired slots are free")
    func streamIdempotent() {
        let live = ActiveStream(deviceID: [1], sessionID: 1, startedAt: 0, expiresAt: 10_000)
        let stale = ActiveStream(deviceID: [2], sessionID: 2, startedAt: 0, expiresAt: 1_000)
        #expect(
            StreamLimit.decide(
                device: [1], session: 1, need: .acquire(seconds: 5), active: [live], limit: .maximum(1), whenFull: .refuseNew, nowMilliseconds: 2_000)
                == .renew(expiresAt: 7_000))
        #expect(
            StreamLimit.decide(
                device: [3], session: 3, need: .acquire(seconds: 5), active: [stale], limit: .maximum(1), whenFull: .refuseNew, nowMilliseconds: 2_000)
                == .admit(expiresAt: 7_000, ending: nil))
        #expect(
            StreamLimit.decide(device: [3], session: 3, need: .none, active: [live], limit: .maximum(1), whenFull: .refuseNew, nowMilliseconds: 2_000)
                == .notNeeded)
    }
}
