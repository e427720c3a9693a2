import KSMService
import Licensing
import Testing

/// The pure parts of key issuing for packagers: the `skd://` URI, the content type of a track
/// type, the key period's name, and the rotation plan over a period log.
struct PackagerPlanTests {
    @Test("the URI: content and period percent-encoded, the KID in lower-case hex; one URI per (content, period, KID)")
    func uriForm() throws {
        let kid: [UInt8] = [0x98, 0xEE, 0x55, 0x96, 0xCD, 0x3E, 0xA2, 0x0D, 0x16, 0x3A, 0xE3, 0x82, 0x42, 0x0C, 0x6E, 0xFF]
        #expect(PackagerAssetID.uri(contentID: "abc123", periodName: "11425", keyID: kid) == "skd://abc123/11425/98ee5596cd3ea20d163ae382420c6eff")
        #expect(PackagerAssetID.uri(contentID: "abc123", periodName: nil, keyID: kid) == "skd://abc123/98ee5596cd3ea20d163ae382420c6eff")
        #expect(PackagerAssetID.uri(contentID: "a/b c%é", periodName: "t5", keyID: kid) == "skd://a%2Fb%20c%25%C3%A9/t5/98ee5596cd3ea20d163ae382420c6eff")
        // A slash in the content ID cannot pose as a period segment.
        #expect(
            PackagerAssetID.uri(contentID: "a/7", periodName: nil, keyID: kid) != PackagerAssetID.uri(contentID: "a", periodName: "7", keyID: kid))
        let request = try PackagerKeyRequest(
            tenant: id("acme"), contentID: "abc123", keyPeriod: try PackagerKeyPeriod(index: nil, startMilliseconds: 1_767_225_600_000), keyID: kid,
            trackType: nil)
        #expect(request.uri == "skd://abc123/t1767225600000/98ee5596cd3ea20d163ae382420c6eff")
        #expect(request.assetID == Array(request.uri.utf8))
    }

    @Test("requests and periods are checked")
    func validation() throws {
        func rejects(_ body: () throws -> Void) {
            #expect(throws: PackagerKeyIssuerError.self) { try body() }
        }
        let kid = [UInt8](repeating: 1, count: 16)
        rejects { _ = try PackagerKeyRequest(tenant: id("t"), contentID: "", keyPeriod: nil, keyID: kid, trackType: nil) }
        rejects { _ = try PackagerKeyRequest(tenant: id("t"), contentID: String(repeating: "c", count: 513), keyPeriod: nil, keyID: kid, trackType: nil) }
        rejects { _ = try PackagerKeyRequest(tenant: id("t"), contentID: "c", keyPeriod: nil, keyID: [1], trackType: nil) }
        rejects { _ = try PackagerKeyRequest(tenant: id("t"), contentID: "c", keyPeriod: nil, keyID: kid, trackType: nil, explicitIV: [1]) }
        rejects { _ = try PackagerKeyPeriod(index: nil) }
        rejects { _ = try PackagerKeyPeriod(index: -1) }
        rejects { _ = try PackagerKeyPeriod(index: 1, startMilliseconds: 10, endMilliseconds: 10) }
        rejects { _ = try IntendedTrackType("") }
        rejects { _ = try IntendedTrackType("HD SD") }
        #expect(try PackagerKeyPeriod(index: 3, startMilliseconds: 50).name == "3")
        #expect(try PackagerKeyPeriod(index: nil, startMilliseconds: 50).order == 50)
    }

    @Test(
        "track types give Apple's content types; video and all give none",
        arguments: [
            ("SD", ContentType.sd), ("HD", .hd), ("HD1", .hd), ("HD2", .hd), ("UHD", .uhd), ("UHD1", .uhd), ("UHD2", .uhd),
            ("SD+HD1", .hd), ("AUDIO", .audio), ("STEREO_AUDIO", .audio), ("MULTICHANNEL_AUDIO", .audio), ("MULTICHANNEL_AUDIO_3_6", .audio),
            ("MULTICHANNEL_AUDIO_7", .audio), ("hd", .hd), ("HD+AUDIO", .hd),
        ] as [(String, ContentType)])
    func contentTypes(track: String, type: ContentType) throws {
        #expect(try IntendedTrackType(track).contentType == type)
    }

    @Test("VIDEO, ALL and unknown names leave the type to the tenant's policy", arguments: ["VIDEO", "ALL", "HDR", "SD+HDR", "+"])
    func noContentType(track: String) throws {
        #expect(try IntendedTrackType(track).contentType == nil)
    }

    @Test("the plan writes the schedules touching the new period while their boundary is ahead, and drops passed ones when the log changed")
    func rotationPlan() {
        let tenant = id("acme")
        func entry(_ order: Int64, start: Int64?, end: Int64?) -> PackagerPeriodEntry {
            PackagerPeriodEntry(order: order, startMilliseconds: start, endMilliseconds: end, assetID: Array("skd://s/\(order)/k".utf8))
        }
        let log = [entry(1, start: 0, end: 100), entry(2, start: 100, end: 200), entry(3, start: nil, end: 300), entry(4, start: nil, end: nil)]
        func schedule(_ from: Int64, _ to: Int64, _ boundary: Int64) -> RotationSchedule {
            RotationSchedule(tenant: tenant, assetID: log[Int(from) - 1].assetID, nextAssetID: log[Int(to) - 1].assetID, boundaryMilliseconds: boundary)
        }
        // Period 3 recorded at 150: 2 -> 3 (boundary: 2's end, 200) is ahead; 1 -> 2 passed; 3 -> 4 at 3's end.
        let plan = PackagerRotationPlan.after(recording: log[2], log: log, changed: true, tenant: tenant, nowMilliseconds: 150)
        #expect(plan.put == [schedule(2, 3, 200), schedule(3, 4, 300)])
        #expect(plan.remove == [log[0].assetID])
        // Unchanged log: the same puts, no removals.
        let again = PackagerRotationPlan.after(recording: log[2], log: log, changed: false, tenant: tenant, nowMilliseconds: 150)
        #expect(again.put == plan.put && again.remove.isEmpty)
        // Periods without times: nothing.
        let bare = [entry(1, start: nil, end: nil), entry(2, start: nil, end: nil)]
        #expect(PackagerRotationPlan.after(recording: bare[1], log: bare, changed: true, tenant: tenant, nowMilliseconds: 0) == PackagerRotationPlan())
        // Out of order: the log sorts by order.
        let reversed = PackagerRotationPlan.after(recording: log[1], log: log.reversed(), changed: false, tenant: tenant, nowMilliseconds: 50)
        #expect(reversed.put == [schedule(1, 2, 100), schedule(2, 3, 200)])
    }
}
