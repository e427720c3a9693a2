import Foundation
import Speke
import Testing

/// Every row of AWS's SPEKE v2 error table ("Customizations and constraints to the DASH-IF
/// specification", API for CPIX): the case that triggers it, answered 422 with the exact message.
@Suite struct SpekeErrorTableTests {
    static func refusal(_ text: String, version: String? = "2.0", policy: ContractPolicy = ContractPolicy()) throws -> SpekeError {
        try #require(throws: SpekeError.self) { try SpekeRequest(body: Array(text.utf8), spekeVersionHeader: version, policy: policy) }
    }

    static func expect(_ error: SpekeError, _ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error.httpStatus == 422, sourceLocation: sourceLocation)
        #expect(error.message == message, sourceLocation: sourceLocation)
        #expect(error.code.isFromSpecification, sourceLocation: sourceLocation)
    }

    @Test func contentIDNotDefined() throws {
        Self.expect(try Self.refusal(CPIXDocuments.oneKey(root: #"version="2.3""#)), "Missing CPIX@contentId")
        Self.expect(try Self.refusal(CPIXDocuments.oneKey(root: #"contentId="" version="2.3""#)), "Missing CPIX@contentId")
    }

    @Test func versionNotDefined() throws {
        Self.expect(try Self.refusal(CPIXDocuments.oneKey(root: #"contentId="abc123""#)), "Missing CPIX@version")
        Self.expect(try Self.refusal(CPIXDocuments.oneKey(root: #"contentId="abc123" version="""#)), "Missing CPIX@version")
    }

    @Test func versionNotSupported() throws {
        Self.expect(try Self.refusal(CPIXDocuments.oneKey(root: #"contentId="abc123" version="4.0""#)), "Unsupported CPIX@version")
        // Each SPEKE version is aligned on one CPIX version.
        Self.expect(try Self.refusal(CPIXDocuments.oneKey(root: #"contentId="abc123" version="2.4""#)), "Unsupported CPIX@version")
        Self.expect(try Self.refusal(CPIXDocuments.oneKey(), version: "2.1"), "Unsupported CPIX@version")
    }

    @Test func schemeNotDefined() throws {
        let key = #"<cpix:ContentKey kid="98ee5596-cd3e-a20d-163a-e382420c6eff"/>"#
        Self.expect(try Self.refusal(CPIXDocuments.oneKey(key: key)), "Missing ContentKey@commonEncryptionScheme for KID 98ee5596-cd3e-a20d-163a-e382420c6eff")
        let empty = #"<cpix:ContentKey kid="98ee5596-cd3e-a20d-163a-e382420c6eff" commonEncryptionScheme=""/>"#
        Self.expect(
            try Self.refusal(CPIXDocuments.oneKey(key: empty)), "Missing ContentKey@commonEncryptionScheme for KID 98ee5596-cd3e-a20d-163a-e382420c6eff")
    }

    @Test func mixedSchemes() throws {
        let keys =
            #"<cpix:ContentKey kid="98ee5596-cd3e-a20d-163a-e382420c6eff" commonEncryptionScheme="cbcs"/><cpix:ContentKey kid="53abdba2-f210-43cb-bc90-f18f9a890a02" commonEncryptionScheme="cenc"/>"#
        Self.expect(try Self.refusal(CPIXDocuments.oneKey(key: keys)), "Non compliant ContentKey@commonEncryptionScheme combination")
    }

    /// AWS's verification suite: the FairPlay request with `cbcs` replaced by `cenc` must fail.
    @Test func schemeNotCompatibleWithFairPlay() throws {
        let cenc = CPIXDocuments.awsFairPlayRequest.replacingOccurrences(of: #"commonEncryptionScheme="cbcs""#, with: #"commonEncryptionScheme="cenc""#)
        Self.expect(try Self.refusal(cenc), "ContentKey@commonEncryptionScheme non compatible with DRMSystem 94ce86fb-07ff-4f43-adb8-93d2fa968ca2")
    }

    @Test func spekeVersionNotSupported() throws {
        Self.expect(try Self.refusal(CPIXDocuments.oneKey(), version: "1.0"), "Unsupported SPEKE version")
        Self.expect(try Self.refusal(CPIXDocuments.oneKey(), version: nil), "Unsupported SPEKE version")
        // The header is checked before the body is read: even garbage gets this answer.
        Self.expect(try Self.refusal("garbage", version: "3.0"), "Unsupported SPEKE version")
    }

    @Test func contractMalformed() throws {
        let all =
            #"<cpix:ContentKeyUsageRule kid="98ee5596-cd3e-a20d-163a-e382420c6eff" intendedTrackType="ALL"><cpix:VideoFilter/><cpix:AudioFilter/></cpix:ContentKeyUsageRule>"#
        let video =
            #"<cpix:ContentKeyUsageRule kid="98ee5596-cd3e-a20d-163a-e382420c6eff" intendedTrackType="VIDEO"><cpix:VideoFilter/></cpix:ContentKeyUsageRule>"#
        let noFilter = #"<cpix:ContentKeyUsageRule kid="98ee5596-cd3e-a20d-163a-e382420c6eff" intendedTrackType="AUDIO"/>"#
        let unknownKID =
            #"<cpix:ContentKeyUsageRule kid="11111111-1111-1111-1111-111111111111" intendedTrackType="AUDIO"><cpix:AudioFilter/></cpix:ContentKeyUsageRule>"#
        let unknownPeriod =
            #"<cpix:ContentKeyUsageRule kid="98ee5596-cd3e-a20d-163a-e382420c6eff" intendedTrackType="VIDEO"><cpix:KeyPeriodFilter periodId="nowhere"/><cpix:VideoFilter/></cpix:ContentKeyUsageRule>"#
        let inverted =
            #"<cpix:ContentKeyUsageRule kid="98ee5596-cd3e-a20d-163a-e382420c6eff" intendedTrackType="SD"><cpix:VideoFilter minPixels="10" maxPixels="9"/></cpix:ContentKeyUsageRule>"#
        let notNumber =
            #"<cpix:ContentKeyUsageRule kid="98ee5596-cd3e-a20d-163a-e382420c6eff" intendedTrackType="SD"><cpix:VideoFilter maxPixels="many"/></cpix:ContentKeyUsageRule>"#
        let allWithoutAudio =
            #"<cpix:ContentKeyUsageRule kid="98ee5596-cd3e-a20d-163a-e382420c6eff" intendedTrackType="ALL"><cpix:VideoFilter/></cpix:ContentKeyUsageRule>"#
        for rules in [all + video, video + video, video + noFilter, unknownKID, unknownPeriod, inverted, notNumber, allWithoutAudio] {
            Self.expect(try Self.refusal(CPIXDocuments.oneKey(rules: rules)), "Malformed encryption contract")
        }
    }

    @Test func contractNotSupportedByTheTenant() throws {
        let policy = ContractPolicy(allowsSharedAudioVideoKey: false)
        Self.expect(try Self.refusal(CPIXDocuments.oneKey(), policy: policy), "Requested CPIX encryption contract not supported")
    }

    @Test func contractMissing() throws {
        let bare = #"<cpix:ContentKeyUsageRule kid="98ee5596-cd3e-a20d-163a-e382420c6eff" intendedTrackType="ALL"/>"#
        Self.expect(try Self.refusal(CPIXDocuments.oneKey(rules: bare)), "Missing CPIX encryption contract")
        Self.expect(try Self.refusal(CPIXDocuments.oneKey(rules: "")), "Missing CPIX encryption contract")
        let noList = CPIXDocuments.oneKey(rules: "").replacingOccurrences(of: "<cpix:ContentKeyUsageRuleList></cpix:ContentKeyUsageRuleList>", with: "")
        Self.expect(try Self.refusal(noList), "Missing CPIX encryption contract")
    }
}
