import KSMOperations
import Licensing
import Speke
import Testing

/// The SPEKE request `ksm admin export-cpix` makes of its options: derived KIDs, period specs,
/// track filters, and the document SPEKE's own reader accepts.
@Suite struct CPIXExportRequestTests {
    let tenant = try! StoreIdentifier("acme")

    @Test func derivedKIDsAreStableAndDifferPerTenantContentPeriodAndTrack() {
        let kid = CPIXExportRequest.derivedKeyID(tenant: tenant, contentID: "live-1", periodName: "7", trackType: "VIDEO")
        #expect(kid == CPIXExportRequest.derivedKeyID(tenant: tenant, contentID: "live-1", periodName: "7", trackType: "VIDEO"))
        let others = [
            CPIXExportRequest.derivedKeyID(tenant: try! StoreIdentifier("other"), contentID: "live-1", periodName: "7", trackType: "VIDEO"),
            CPIXExportRequest.derivedKeyID(tenant: tenant, contentID: "live-2", periodName: "7", trackType: "VIDEO"),
            CPIXExportRequest.derivedKeyID(tenant: tenant, contentID: "live-1", periodName: "8", trackType: "VIDEO"),
            CPIXExportRequest.derivedKeyID(tenant: tenant, contentID: "live-1", periodName: nil, trackType: "VIDEO"),
            CPIXExportRequest.derivedKeyID(tenant: tenant, contentID: "live-1", periodName: "7", trackType: "AUDIO"),
            // Length prefixes: moving a character from one field to the next changes the KID.
            CPIXExportRequest.derivedKeyID(tenant: tenant, contentID: "live-17", periodName: nil, trackType: "VIDEO"),
        ]
        #expect(Set(others + [kid]).count == others.count + 1)
        // RFC 9562: version 8 in the high nibble of byte 6, variant 10 in the top bits of byte 8.
        for derived in others + [kid] {
            #expect(derived.bytes[6] >> 4 == 8)
            #expect(derived.bytes[8] >> 6 == 0b10)
        }
    }

    @Test func periodSpecsReadIndexStartAndEnd() throws {
        #expect(try CPIXExportPeriod(spec: "12") == CPIXExportPeriod(index: 12))
        #expect(try CPIXExportPeriod(spec: "12@2030-01-01T00:00:00Z") == CPIXExportPeriod(index: 12, start: "2030-01-01T00:00:00Z"))
        #expect(
            try CPIXExportPeriod(spec: "3@2030-01-01T00:00:00Z/2030-01-01T00:10:00Z")
                == CPIXExportPeriod(index: 3, start: "2030-01-01T00:00:00Z", end: "2030-01-01T00:10:00Z"))
        let timesOnly = try CPIXExportPeriod(spec: "2030-01-01T00:00:00Z/2030-01-01T00:10:00Z")
        #expect(timesOnly == CPIXExportPeriod(index: nil, start: "2030-01-01T00:00:00Z", end: "2030-01-01T00:10:00Z"))
        // Named as SPEKE issuing names them: the index, else t and the start in ms.
        #expect(try CPIXExportPeriod(spec: "3@2030-01-01T00:00:00Z").name() == "3")
        #expect(try timesOnly.name() == "t1893456000000")
        for bad in ["", "x", "1@", "1@/2030-01-01T00:00:00Z", "1@2030-01-01T00:00:00Z/", "x@2030-01-01T00:00:00Z"] {
            #expect(throws: CPIXFileError.self, "\(bad)") { try CPIXExportPeriod(spec: bad) }
        }
        for unreadable in ["-1", "2030-01-01", "2030-01-01T00:10:00Z/2030-01-01T00:00:00Z"] {
            #expect(throws: CPIXFileError.self, "\(unreadable)") { try CPIXExportPeriod(spec: unreadable).name() }
        }
    }

    @Test func trackFiltersFollowAWSPresetsAndJoinWithPlus() throws {
        #expect(try CPIXTrackFilter(trackType: "SD") == CPIXTrackFilter(video: .init(nil, 442_368)))
        #expect(try CPIXTrackFilter(trackType: "SD+HD1") == CPIXTrackFilter(video: .init(nil, 921_600)))
        #expect(try CPIXTrackFilter(trackType: "HD2+UHD1") == CPIXTrackFilter(video: .init(921_601, 8_847_360)))
        #expect(try CPIXTrackFilter(trackType: "MULTICHANNEL_AUDIO_3_6") == CPIXTrackFilter(audio: .init(3, 6)))
        #expect(try CPIXTrackFilter(trackType: "ALL") == CPIXTrackFilter(video: .init(nil, nil), audio: .init(nil, nil)))
        let elements = try CPIXTrackFilter(trackType: "HD1").elements
        #expect(elements.map(\.name) == ["VideoFilter"])
        #expect(elements.first?[attribute: "minPixels"] == "442369" && elements.first?[attribute: "maxPixels"] == "921600")
        for bad in ["4K", "SD+", "ALL+AUDIO", "video"] {
            #expect(throws: CPIXFileError.self, "\(bad)") { try CPIXTrackFilter(trackType: bad) }
        }
    }

    @Test func keysAreListedPeriodByPeriodWithTheGivenKIDsInOrder() throws {
        let kids = try CPIXExportRequest.keyIDs((1...4).map { "00000000-0000-0000-0000-00000000000\($0)" })
        let request = CPIXExportRequest(
            tenant: tenant, contentID: "live-1", periods: [CPIXExportPeriod(index: 5), CPIXExportPeriod(index: 6)], trackTypes: ["SD", "AUDIO"],
            keyIDs: kids)
        let slots = try request.slots()
        #expect(slots.map { "\($0.period?.index ?? 0)/\($0.trackType)" } == ["5/SD", "5/AUDIO", "6/SD", "6/AUDIO"])
        #expect(slots.map(\.keyID) == kids)
    }

    @Test func impossibleKeyListsAreRefusedWithTheReason() throws {
        let oneKID = try CPIXExportRequest.keyIDs(["00000000-0000-0000-0000-000000000001"])
        let cases: [(CPIXExportRequest, String)] = [
            (CPIXExportRequest(tenant: tenant, contentID: "c", trackTypes: []), "no track type"),
            (CPIXExportRequest(tenant: tenant, contentID: "c", trackTypes: ["SD", "SD"]), "given twice"),
            (CPIXExportRequest(tenant: tenant, contentID: "c", trackTypes: ["ALL", "AUDIO"]), "ALL"),
            (CPIXExportRequest(tenant: tenant, contentID: "c", periods: [.init(index: 1), .init(index: 1)]), "a period is given twice"),
            (CPIXExportRequest(tenant: tenant, contentID: "c", keyIDs: oneKID), "1 KIDs given for 2 keys"),
            (CPIXExportRequest(tenant: tenant, contentID: "c", trackTypes: ["VIDEO"], keyIDs: oneKID + oneKID), "2 KIDs given for 1 keys"),
        ]
        for (request, reason) in cases {
            let error = try #require(throws: CPIXFileError.self) { try request.slots() }
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains(reason), "\(error.message)")
        }
        #expect(throws: CPIXFileError.self) { try CPIXExportRequest.keyIDs(["not-a-uuid"]) }
    }

    @Test func theRequestIsOneSPEKEAcceptsWithPeriodsRulesAndFairPlaySignaling() throws {
        let request = CPIXExportRequest(
            tenant: tenant, contentID: "live/1",
            periods: [CPIXExportPeriod(index: 9, start: "2030-01-01T00:00:00Z", end: "2030-01-01T00:10:00Z"), CPIXExportPeriod(index: 10)],
            trackTypes: ["HD", "STEREO_AUDIO"])
        let speke = try request.spekeRequest()
        #expect(speke.contentID == "live/1")
        #expect(speke.cpixVersion == "2.3")
        #expect(speke.contentKeys.count == 4)
        #expect(speke.contentKeys.allSatisfy { $0.commonEncryptionScheme == "cbcs" && $0.explicitIV == nil })
        #expect(speke.drmSystems.allSatisfy { $0.isFairPlay && $0.hlsPlaylists == [.media, .master] && $0.requested.contains(.uriExtXKey) })
        #expect(speke.periods.map(\.index) == [9, 10])
        #expect(speke.periods.first?.start == "2030-01-01T00:00:00Z" && speke.periods.first?.end == "2030-01-01T00:10:00Z")
        #expect(speke.usageRules.map(\.intendedTrackType) == ["HD", "STEREO_AUDIO", "HD", "STEREO_AUDIO"])
        for key in speke.contentKeys { #expect(speke.periods(for: key.kid).count == 1) }
        #expect(speke.deliveryRecipients.isEmpty)
    }

    @Test func periodsGivenByTheirTimesAloneAreWrittenWithoutIndexInACPIX23Document() throws {
        let request = CPIXExportRequest(
            tenant: tenant, contentID: "live-2",
            periods: [try CPIXExportPeriod(spec: "2030-01-01T00:00:00Z/2030-01-01T00:10:00Z"), try CPIXExportPeriod(spec: "2030-01-01T00:10:00Z")],
            trackTypes: ["VIDEO"])
        let speke = try request.spekeRequest()
        #expect(speke.cpixVersion == "2.3")
        #expect(speke.periods.map(\.id) == ["keyPeriod_p1", "keyPeriod_p2"])
        #expect(speke.periods.allSatisfy { $0.index == nil && $0.start != nil })
        let slots = try request.slots()
        #expect(
            slots.map(\.keyID)
                == ["t1893456000000", "t1893456600000"].map {
                    CPIXExportRequest.derivedKeyID(tenant: tenant, contentID: "live-2", periodName: $0, trackType: "VIDEO")
                })
    }

    @Test func anUnreadableRecipientCertificateIsRefusedAsSPEKERefusesIt() throws {
        let request = CPIXExportRequest(tenant: tenant, contentID: "c", recipientCertificateDER: [0x30, 0x03, 0x02, 0x01, 0x00])
        let error = try #require(throws: CPIXFileError.self) { try request.spekeRequest() }
        #expect(error.message.hasPrefix("Invalid DeliveryData certificate"), "\(error.message)")
    }
}
