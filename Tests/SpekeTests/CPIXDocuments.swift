import Foundation

/// CPIX documents the tests read, each with where it came from.
enum CPIXDocuments {
    /// AWS's SPEKE v2 verification suite, FairPlay request, verbatim (read from Fixtures/speke): awslabs/speke-reference-server
    /// at a926114fb2288e63ad1d7b7a468d462c62cd1696,
    /// `spekev2_verification_testsuite/spekev2_requests/test_case_1_p_v_1_a_1/3_fairplay.xml`
    /// (Apache-2.0). Header `X-Speke-Version: 2.0`. Note the empty `<cpix:PSSH />` and the
    /// white space inside the empty `HLSSignalingData` elements.
    static let awsFairPlayRequest: String = {
        // The package root is three levels above this file (Tests/SpekeTests/CPIXDocuments.swift).
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let path = root.appendingPathComponent("Fixtures/speke/aws-verification-fairplay-request.xml").path
        return String(decoding: FileManager.default.contents(atPath: path)!, as: UTF8.self)
    }()

    static let videoKID = "873f3740-2508-4a2d-94bc-9b0f86649251"
    static let audioKID = "0c54f2b0-b433-45a4-ae73-664438bb0b4e"
    static let fairPlaySystemID = "94ce86fb-07ff-4f43-adb8-93d2fa968ca2"
    static let widevineSystemID = "edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"

    /// A one-key FairPlay request of our own, VOD shape (no periods), for the error cases: each
    /// test replaces one piece. `explicitIV` is AWS's example IV ("Standard payload components").
    static func oneKey(
        root: String = #"contentId="abc123" version="2.3""#,
        key: String = #"<cpix:ContentKey explicitIV="OFj2IjCsPJFfMAxmQxLGPw==" kid="98ee5596-cd3e-a20d-163a-e382420c6eff" commonEncryptionScheme="cbcs"/>"#,
        system: String =
            #"<cpix:DRMSystem kid="98ee5596-cd3e-a20d-163a-e382420c6eff" systemId="94ce86fb-07ff-4f43-adb8-93d2fa968ca2"><cpix:HLSSignalingData playlist="media"/><cpix:HLSSignalingData playlist="master"/></cpix:DRMSystem>"#,
        rules: String =
            #"<cpix:ContentKeyUsageRule kid="98ee5596-cd3e-a20d-163a-e382420c6eff" intendedTrackType="ALL"><cpix:VideoFilter/><cpix:AudioFilter/></cpix:ContentKeyUsageRule>"#,
        extra: String = ""
    ) -> String {
        """
        <cpix:CPIX \(root) xmlns:cpix="urn:dashif:org:cpix" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc" xmlns:ds="http://www.w3.org/2000/09/xmldsig#">
        \(extra)<cpix:ContentKeyList>\(key)</cpix:ContentKeyList>
        <cpix:DRMSystemList>\(system)</cpix:DRMSystemList>
        <cpix:ContentKeyUsageRuleList>\(rules)</cpix:ContentKeyUsageRuleList>
        </cpix:CPIX>
        """
    }

    static let oneKeyKID = "98ee5596-cd3e-a20d-163a-e382420c6eff"
}
