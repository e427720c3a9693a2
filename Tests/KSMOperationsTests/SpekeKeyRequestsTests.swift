import KSMOperations
import KSMService
import Licensing
import Speke
import Testing

/// What `ksm speke` asks the packager key issuer for, per requested key: content ID, key period,
/// KID, track type and explicitIV, from documents read by the Speke library.
@Suite struct SpekeKeyRequestsTests {
    static let video = "873f3740-2508-4a2d-94bc-9b0f86649251"
    static let audio = "0c54f2b0-b433-45a4-ae73-664438bb0b4e"

    static func document(version: String = "2.3", keys: String, periods: String?, rules: String) -> [UInt8] {
        let systems = [video, audio].map { kid in
            """
            <cpix:DRMSystem kid="\(kid)" systemId="94ce86fb-07ff-4f43-adb8-93d2fa968ca2">
              <cpix:HLSSignalingData playlist="media"/><cpix:HLSSignalingData playlist="\(version == "2.4" ? "multiVariant" : "master")"/>
            </cpix:DRMSystem>
            """
        }
        return Array(
            """
            <cpix:CPIX contentId="news/eu" version="\(version)" xmlns:cpix="urn:dashif:org:cpix" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc">
              <cpix:ContentKeyList>\(keys)</cpix:ContentKeyList>
              <cpix:DRMSystemList>\(systems.joined())</cpix:DRMSystemList>
              \(periods.map { "<cpix:ContentKeyPeriodList>\($0)</cpix:ContentKeyPeriodList>" } ?? "")
              <cpix:ContentKeyUsageRuleList>\(rules)</cpix:ContentKeyUsageRuleList>
            </cpix:CPIX>
            """.utf8)
    }

    static let twoKeys = """
        <cpix:ContentKey kid="\(video)" commonEncryptionScheme="cbcs" explicitIV="OFj2IjCsPJFfMAxmQxLGPw=="/>
        <cpix:ContentKey kid="\(audio)" commonEncryptionScheme="cbcs"/>
        """

    @Test func periodKIDTrackTypeAndIVOfEachKey() throws {
        let rules = """
            <cpix:ContentKeyUsageRule kid="\(Self.video)" intendedTrackType="SD+HD1"><cpix:KeyPeriodFilter periodId="p7"/><cpix:VideoFilter maxPixels="921600"/></cpix:ContentKeyUsageRule>
            <cpix:ContentKeyUsageRule kid="\(Self.audio)" intendedTrackType="AUDIO"><cpix:KeyPeriodFilter periodId="p7"/><cpix:AudioFilter/></cpix:ContentKeyUsageRule>
            """
        let request = try SpekeRequest(
            body: Self.document(keys: Self.twoKeys, periods: "<cpix:ContentKeyPeriod id=\"p7\" index=\"7\"/>", rules: rules), spekeVersionHeader: "2.0")
        let keys = try SpekeKeyRequests.requests(for: request, tenant: try StoreIdentifier("acme"))
        #expect(keys.count == 2)
        #expect(keys[0].uri == "skd://news%2Feu/7/873f374025084a2d94bc9b0f86649251")
        #expect(keys[0].keyPeriod?.index == 7)
        #expect(keys[0].trackType?.value == "SD+HD1")
        #expect(keys[0].trackType?.contentType == .hd)
        #expect(keys[0].explicitIV?.count == 16)
        #expect(keys[1].explicitIV == nil)
        #expect(keys[1].trackType?.contentType == .audio)
        #expect(keys.allSatisfy { $0.tenant.value == "acme" && $0.contentID == "news/eu" })
    }

    @Test func aVODKeyHasNoPeriod() throws {
        let rules = """
            <cpix:ContentKeyUsageRule kid="\(Self.video)" intendedTrackType="VIDEO"><cpix:VideoFilter/></cpix:ContentKeyUsageRule>
            <cpix:ContentKeyUsageRule kid="\(Self.audio)" intendedTrackType="AUDIO"><cpix:AudioFilter/></cpix:ContentKeyUsageRule>
            """
        let request = try SpekeRequest(body: Self.document(keys: Self.twoKeys, periods: nil, rules: rules), spekeVersionHeader: "2.0")
        let keys = try SpekeKeyRequests.requests(for: request, tenant: try StoreIdentifier("acme"))
        #expect(keys.map(\.keyPeriod) == [nil, nil])
        #expect(keys[0].uri == "skd://news%2Feu/873f374025084a2d94bc9b0f86649251")
    }

    @Test func aSPEKE21PeriodCarriesItsTimes() throws {
        let rules = """
            <cpix:ContentKeyUsageRule kid="\(Self.video)" intendedTrackType="VIDEO"><cpix:KeyPeriodFilter periodId="p1"/><cpix:VideoFilter/></cpix:ContentKeyUsageRule>
            <cpix:ContentKeyUsageRule kid="\(Self.audio)" intendedTrackType="AUDIO"><cpix:KeyPeriodFilter periodId="p1"/><cpix:AudioFilter/></cpix:ContentKeyUsageRule>
            """
        let period = "<cpix:ContentKeyPeriod id=\"p1\" index=\"1\" start=\"2026-11-28T12:00:00Z\" end=\"2026-11-28T12:00:10.5Z\"/>"
        let request = try SpekeRequest(body: Self.document(version: "2.4", keys: Self.twoKeys, periods: period, rules: rules), spekeVersionHeader: "2.1")
        let key = try #require(try SpekeKeyRequests.requests(for: request, tenant: try StoreIdentifier("acme")).first)
        #expect(key.keyPeriod?.startMilliseconds == 1_795_867_200_000)
        #expect(key.keyPeriod?.endMilliseconds == 1_795_867_210_500)
    }

    @Test func aKIDOnTwoPeriodsOfOneDocumentIsRefused() throws {
        let rules = """
            <cpix:ContentKeyUsageRule kid="\(Self.video)" intendedTrackType="VIDEO"><cpix:KeyPeriodFilter periodId="p1"/><cpix:KeyPeriodFilter periodId="p2"/><cpix:VideoFilter/></cpix:ContentKeyUsageRule>
            <cpix:ContentKeyUsageRule kid="\(Self.audio)" intendedTrackType="AUDIO"><cpix:KeyPeriodFilter periodId="p1"/><cpix:AudioFilter/></cpix:ContentKeyUsageRule>
            """
        let periods = "<cpix:ContentKeyPeriod id=\"p1\" index=\"1\"/><cpix:ContentKeyPeriod id=\"p2\" index=\"2\"/>"
        let request = try SpekeRequest(body: Self.document(keys: Self.twoKeys, periods: periods, rules: rules), spekeVersionHeader: "2.0")
        let tenant = try StoreIdentifier("acme")
        do throws(SpekeError) {
            _ = try SpekeKeyRequests.requests(for: request, tenant: tenant)
            Issue.record("a KID on two periods was accepted")
        } catch {
            #expect(error.httpStatus == 422)
            #expect(error.message.hasPrefix("Invalid key request: KID \(Self.video)"), "\(error.message)")
        }
    }
}
