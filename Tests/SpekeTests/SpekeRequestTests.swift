import Foundation
import Speke
import Testing

/// Reading requests: AWS's FairPlay request, the model it gives, and the shapes SPEKE v2.1 adds.
@Suite struct SpekeRequestTests {
    static func request(_ text: String, version: String = "2.0", policy: ContractPolicy = ContractPolicy()) throws(SpekeError) -> SpekeRequest {
        try SpekeRequest(body: Array(text.utf8), spekeVersionHeader: version, policy: policy)
    }

    @Test func readsAWSsFairPlayRequest() throws {
        let request = try Self.request(CPIXDocuments.awsFairPlayRequest)
        #expect(request.spekeVersion == .v2_0)
        #expect(request.contentID == "test_case_1")
        #expect(request.cpixVersion == "2.3")
        #expect(request.contentKeys.map(\.kidText) == [CPIXDocuments.videoKID, CPIXDocuments.audioKID])
        #expect(request.contentKeys.allSatisfy { $0.commonEncryptionScheme == "cbcs" && $0.explicitIV == nil })
        #expect(request.drmSystems.count == 2)
        for system in request.drmSystems {
            #expect(system.isFairPlay)
            #expect(system.requested == [.pssh, .hlsSignalingData])
            #expect(system.hlsPlaylists == [.media, .master])
        }
        #expect(request.periods == [ContentKeyPeriod(id: "keyPeriod_2e19ac38-22d3-4bb2-b290-95a72f4732ef", index: 0)])
        let video = try #require(KID(uuid: CPIXDocuments.videoKID))
        let audio = try #require(KID(uuid: CPIXDocuments.audioKID))
        #expect(
            request.usageRules == [
                ContentKeyUsageRule(
                    kid: video, intendedTrackType: "VIDEO", periodIDs: ["keyPeriod_2e19ac38-22d3-4bb2-b290-95a72f4732ef"], videoFilters: [VideoFilter()]),
                ContentKeyUsageRule(
                    kid: audio, intendedTrackType: "AUDIO", periodIDs: ["keyPeriod_2e19ac38-22d3-4bb2-b290-95a72f4732ef"], audioFilters: [AudioFilter()]),
            ])
        #expect(request.deliveryRecipients.isEmpty)
        #expect(request.periods(for: video).map(\.index) == [0])
        #expect(request.usageRules(for: audio).map(\.intendedTrackType) == ["AUDIO"])
    }

    @Test func readsExplicitIVLenientlyAndKeepsItsText() throws {
        // AWS's VOD example carries `L6jzdXrXAFbCJGBuMrrKrG==`, whose last symbol has padding bits set.
        let request = try Self.request(
            CPIXDocuments.oneKey(
                key: #"<cpix:ContentKey explicitIV="L6jzdXrXAFbCJGBuMrrKrG==" kid="98ee5596-cd3e-a20d-163a-e382420c6eff" commonEncryptionScheme="cbcs"/>"#))
        #expect(request.contentKeys.first?.explicitIV?.count == 16)
        #expect(request.contentKeys.first?.explicitIVText == "L6jzdXrXAFbCJGBuMrrKrG==")
    }

    @Test func readsSPEKE21PeriodsWithStartAndEnd() throws {
        let periods =
            #"<cpix:ContentKeyPeriodList><cpix:ContentKeyPeriod id="p1" start="2026-11-28T10:00:00Z" end="2026-11-28T10:05:00Z"/></cpix:ContentKeyPeriodList>"#
        let text = CPIXDocuments.oneKey(root: #"contentId="live" version="2.4""#).replacingOccurrences(
            of: "<cpix:ContentKeyUsageRuleList>", with: periods + "<cpix:ContentKeyUsageRuleList>")
        let request = try Self.request(text, version: "2.1")
        #expect(request.spekeVersion == .v2_1)
        #expect(request.periods == [ContentKeyPeriod(id: "p1", start: "2026-11-28T10:00:00Z", end: "2026-11-28T10:05:00Z")])
        // SPEKE v2.0 requires the index.
        let old = text.replacingOccurrences(of: #"version="2.4""#, with: #"version="2.3""#)
        #expect(throws: SpekeError.malformedDocument("ContentKeyPeriod p1 has no index")) { try Self.request(old) }
    }

    @Test func acceptsTheCPIX24MultivariantSpelling() throws {
        let system =
            #"<cpix:DRMSystem kid="98ee5596-cd3e-a20d-163a-e382420c6eff" systemId="94ce86fb-07ff-4f43-adb8-93d2fa968ca2"><cpix:HLSSignalingData playlist="multiVariant"/><cpix:HLSSignalingData playlist="media"/></cpix:DRMSystem>"#
        let request = try Self.request(CPIXDocuments.oneKey(root: #"contentId="a" version="2.4""#, system: system), version: "2.1")
        #expect(request.drmSystems.first?.hlsPlaylists == [.multiVariant, .media])
        let twice =
            #"<cpix:DRMSystem kid="98ee5596-cd3e-a20d-163a-e382420c6eff" systemId="94ce86fb-07ff-4f43-adb8-93d2fa968ca2"><cpix:HLSSignalingData playlist="multiVariant"/><cpix:HLSSignalingData playlist="master"/></cpix:DRMSystem>"#
        #expect(throws: SpekeError.self) { try Self.request(CPIXDocuments.oneKey(root: #"contentId="a" version="2.4""#, system: twice), version: "2.1") }
    }

    /// Research section 9: a DRM system other than FairPlay is refused with our message, before any key is issued.
    @Test func refusesOtherDRMSystems() {
        let widevine =
            #"<cpix:DRMSystem kid="98ee5596-cd3e-a20d-163a-e382420c6eff" systemId="EDEF8BA9-79D6-4ACE-A3C8-27DCD51D21ED"><cpix:PSSH/></cpix:DRMSystem>"#
        #expect(throws: SpekeError.unsupportedDRMSystem(systemID: "EDEF8BA9-79D6-4ACE-A3C8-27DCD51D21ED")) {
            try Self.request(CPIXDocuments.oneKey(system: widevine))
        }
    }

    /// The structural negative cases of AWS's verification suite: each must fail with a 4xx.
    @Test(arguments: [
        ("no ContentKeyList", #"<cpix:ContentKeyList>"#, #"<cpix:Unused>"#, #"</cpix:ContentKeyList>"#, #"</cpix:Unused>"#),
        ("no DRMSystemList", #"<cpix:DRMSystemList>"#, #"<cpix:Unused>"#, #"</cpix:DRMSystemList>"#, #"</cpix:Unused>"#),
        ("no ContentKeyUsageRuleList", #"<cpix:ContentKeyUsageRuleList>"#, #"<cpix:Unused>"#, #"</cpix:ContentKeyUsageRuleList>"#, #"</cpix:Unused>"#),
        (
            "no kid on ContentKey", #"<cpix:ContentKey explicitIV="OFj2IjCsPJFfMAxmQxLGPw==" kid="98ee5596-cd3e-a20d-163a-e382420c6eff""#, #"<cpix:ContentKey"#,
            "", ""
        ),
        ("no systemId", #"systemId="94ce86fb-07ff-4f43-adb8-93d2fa968ca2""#, "", "", ""),
        ("no kid on DRMSystem", #"<cpix:DRMSystem kid="98ee5596-cd3e-a20d-163a-e382420c6eff""#, "<cpix:DRMSystem", "", ""),
        ("no kid on rule", #"<cpix:ContentKeyUsageRule kid="98ee5596-cd3e-a20d-163a-e382420c6eff""#, "<cpix:ContentKeyUsageRule", "", ""),
        ("no intendedTrackType", #"intendedTrackType="ALL""#, "", "", ""),
        ("version 4.0", #"version="2.3""#, #"version="4.0""#, "", ""),
    ])
    func refusesAWSNegativeCases(_ name: String, _ a: String, _ b: String, _ c: String, _ d: String) throws {
        var text = CPIXDocuments.oneKey().replacingOccurrences(of: a, with: b)
        if !c.isEmpty { text = text.replacingOccurrences(of: c, with: d) }
        let error = try #require(throws: SpekeError.self, "\(name)") { try Self.request(text) }
        #expect((400..<500).contains(error.httpStatus), "\(name): \(error)")
    }

    @Test func refusesAMalformedOrHostileBody() throws {
        let laughs = #"<?xml version="1.0"?><!DOCTYPE a [<!ENTITY a "aaaa">]><cpix:CPIX xmlns:cpix="urn:dashif:org:cpix">&a;</cpix:CPIX>"#
        let error = try #require(throws: SpekeError.self) { try Self.request(laughs) }
        #expect(error.code == .malformedDocument && error.httpStatus == 422)
        #expect(error.message.hasPrefix("Malformed CPIX document: a document type declaration"))
        let big = try #require(throws: SpekeError.self) {
            try SpekeRequest(body: Array(CPIXDocuments.awsFairPlayRequest.utf8), spekeVersionHeader: "2.0", limits: XMLReadLimits(maximumBytes: 100))
        }
        #expect(big.code == .documentTooLarge && big.httpStatus == 413)
        #expect(throws: SpekeError.malformedDocument("the root element is not cpix:CPIX")) { try Self.request("<CPIX/>") }
    }
}
