import Licensing
import RedisStore
import Testing
import Wire

/// The rotation schedule as the fields of its Redis hash.
@Suite struct RotationScheduleRedisHashTests {
    static func id(_ text: String) -> StoreIdentifier {
        // Test literals are valid by construction.
        try! StoreIdentifier(text)
    }
    let now: Int64 = 1_700_000_000_000

    @Test func fieldsRoundTripWithPeriodsAndKeys() throws {
        let schedule = RotationSchedule(
            tenant: Self.id("acme"), assetID: Array("skd://acme/live-1".utf8), currentPeriod: Self.id("p1"),
            nextAssetID: Array("skd://acme/live-2".utf8), nextPeriod: Self.id("p2"), boundaryMilliseconds: now + 30_000, keysPerViewer: 2)
        let fields = Dictionary(uniqueKeysWithValues: schedule.fields)
        #expect(fields["next_asset"] == HexEncoding.encode(Array("skd://acme/live-2".utf8)))
        let decoded = try RotationSchedule(tenant: schedule.tenant, assetID: schedule.assetID, fields: fields)
        #expect(decoded == schedule)
        #expect(decoded.nextKeyRequest.assetID == Array("skd://acme/live-2".utf8))
        #expect(decoded.nextKeyRequest.keyPeriod == Self.id("p2"))
        #expect(decoded.nextKeyRequest.accountReads.isEmpty, "a prefetch never reads per-account records")
    }

    @Test func nextAssetDefaultsToTheSameAssetAndKeysToOne() throws {
        let asset = Array("live".utf8)
        let decoded = try RotationSchedule(tenant: Self.id("acme"), assetID: asset, fields: ["boundary": "5", "next_asset": HexEncoding.encode(asset)])
        #expect(decoded.keysPerViewer == 1 && decoded.currentPeriod == nil && decoded.nextPeriod == nil && decoded.nextAssetID == asset)
        #expect(RotationSchedule(tenant: Self.id("acme"), assetID: asset, boundaryMilliseconds: 5).nextAssetID == asset)
    }

    @Test(arguments: [
        ["next_asset": "6161"],
        ["boundary": "soon", "next_asset": "6161"],
        ["boundary": "5"],
        ["boundary": "5", "next_asset": "zz"],
        ["boundary": "5", "next_asset": "6161", "keys": "0"],
        ["boundary": "5", "next_asset": "6161", "next_period": "a:b"],
    ])
    func corruptRecordIsRefused(_ fields: [String: String]) {
        #expect(throws: LicenseStoreError.self) { try RotationSchedule(tenant: Self.id("acme"), assetID: [0x61], fields: fields) }
    }
}
