import Foundation
import Speke
import Testing
import Wire

/// Answers: AWS's FairPlay request answered in the clear, read back by our reader, checked
/// element by element against what SPEKE and AWS's verification suite require.
@Suite struct SpekeResponseWriterTests {
    static func issued(for request: SpekeRequest, seed: UInt8 = 1) throws -> [KID: IssuedKey] {
        var keys: [KID: IssuedKey] = [:]
        for (offset, key) in request.contentKeys.enumerated() {
            let byte = seed &+ UInt8(offset)
            keys[key.kid] = try IssuedKey(
                key: [UInt8](repeating: byte, count: 16), iv: key.explicitIV ?? [UInt8](repeating: byte &+ 0x80, count: 16),
                skdURI: "skd://test/\(key.kidText)")
        }
        return keys
    }

    static func text(_ element: XMLElementValue?) -> String? {
        element.map(\.trimmedText)
    }

    @Test func answersAWSsFairPlayRequest() throws {
        let request = try SpekeRequest(body: Array(CPIXDocuments.awsFairPlayRequest.utf8), spekeVersionHeader: "2.0")
        let keys = try Self.issued(for: request)
        let response = try SpekeResponseWriter.response(for: request, keys: keys, userAgent: "FairPlayKSM/test")
        #expect(response.spekeVersion == "2.0")
        #expect(response.userAgent == "FairPlayKSM/test")
        #expect(response.headerFields.map(\.name) == ["Content-Type", "X-Speke-Version", "X-Speke-User-Agent"])
        #expect(SpekeResponse.contentType == "application/xml")

        let cpix = CPIXNamespace.cpix
        let pskc = CPIXNamespace.pskc
        let root = try SafeXMLReader.read(response.body)
        #expect(root.namespace == cpix && root.name == "CPIX")
        #expect(root[attribute: "contentId"] == "test_case_1")
        #expect(root[attribute: "version"] == "2.3")
        #expect(root[attribute: "id"] == nil)
        // CPIX 2.3 XSD sequence.
        #expect(root.children.map(\.name) == ["ContentKeyList", "DRMSystemList", "ContentKeyPeriodList", "ContentKeyUsageRuleList"])

        let contentKeys = root.elements(cpix, "ContentKeyList").first?.elements(cpix, "ContentKey") ?? []
        #expect(contentKeys.count == 2)
        for element in contentKeys {
            let kid = try #require(element[attribute: "kid"].flatMap(KID.init(uuid:)))
            let issued = try #require(keys[kid])
            #expect(element[attribute: "commonEncryptionScheme"] == "cbcs")
            #expect(element[attribute: "explicitIV"] == Base64.encode(issued.iv))
            let secret = element.elements(cpix, "Data").first?.elements(pskc, "Secret").first
            #expect(Self.text(secret?.elements(pskc, "PlainValue").first) == Base64.encode(issued.key))
        }

        let systems = root.elements(cpix, "DRMSystemList").first?.elements(cpix, "DRMSystem") ?? []
        #expect(systems.count == 2)
        for system in systems {
            #expect(system[attribute: "systemId"] == CPIXDocuments.fairPlaySystemID)
            let kid = try #require(system[attribute: "kid"].flatMap(KID.init(uuid:)))
            let uri = try #require(keys[kid]?.skdURI)
            // FairPlay: no PSSH, no ContentProtectionData (verification suite), one media and one master.
            #expect(system.children.map(\.name) == ["HLSSignalingData", "HLSSignalingData"])
            let signaling = Dictionary(
                uniqueKeysWithValues: system.children.map {
                    ($0[attribute: "playlist"] ?? "", String(decoding: Base64.decode($0.trimmedText) ?? [], as: UTF8.self))
                })
            let attributes = #"METHOD=SAMPLE-AES,URI="\#(uri)",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1""#
            #expect(signaling["media"] == "#EXT-X-KEY:" + attributes)
            #expect(signaling["master"] == "#EXT-X-SESSION-KEY:" + attributes)
        }

        // Periods and the contract come back unchanged.
        let original = try SafeXMLReader.read(Array(CPIXDocuments.awsFairPlayRequest.utf8))
        #expect(root.elements(cpix, "ContentKeyPeriodList") == original.elements(cpix, "ContentKeyPeriodList"))
        #expect(root.elements(cpix, "ContentKeyUsageRuleList") == original.elements(cpix, "ContentKeyUsageRuleList"))

        // The answer is itself a valid SPEKE document: read as a request, it names the same keys.
        let reread = try SpekeRequest(body: response.body, spekeVersionHeader: "2.0")
        #expect(reread.contentKeys.map(\.kid) == request.contentKeys.map(\.kid))
        #expect(reread.usageRules == request.usageRules)
        #expect(reread.periods == request.periods)
    }

    /// The FairPlay signaling of an independent CPIX fixture (research notes, section 10.6), byte for byte.
    @Test func signalingMatchesAPublishedFairPlayValue() {
        let tag = HLSSignaling.tag(for: .media, skdURI: "skd://01234567-8901-2345-6789-012345678901:01234567890123456789012345678901")
        #expect(
            Base64.encode(Array(tag.utf8))
                == "I0VYVC1YLUtFWTpNRVRIT0Q9U0FNUExFLUFFUyxVUkk9InNrZDovLzAxMjM0NTY3LTg5MDEtMjM0NS02Nzg5LTAxMjM0NTY3ODkwMTowMTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMSIsS0VZRk9STUFUPSJjb20uYXBwbGUuc3RyZWFtaW5na2V5ZGVsaXZlcnkiLEtFWUZPUk1BVFZFUlNJT05TPSIxIg=="
        )
        #expect(HLSSignaling.tag(for: .multiVariant, skdURI: "skd://a").hasPrefix("#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI=\"skd://a\""))
    }

    @Test func keepsTheRequestsExplicitIVAndPlaylistSpelling() throws {
        let system =
            #"<cpix:DRMSystem kid="98ee5596-cd3e-a20d-163a-e382420c6eff" systemId="94ce86fb-07ff-4f43-adb8-93d2fa968ca2" name="fps"><cpix:URIExtXKey/><cpix:HLSSignalingData playlist="multiVariant"/><cpix:HLSSignalingData playlist="media"/></cpix:DRMSystem>"#
        let request = try SpekeRequest(
            body: Array(CPIXDocuments.oneKey(root: #"contentId="abc123" version="2.4" name="movie""#, system: system).utf8), spekeVersionHeader: "2.1")
        let keys = try Self.issued(for: request)
        let response = try SpekeResponseWriter.response(for: request, keys: keys)
        #expect(response.spekeVersion == "2.1")
        #expect(response.userAgent == SpekeResponseWriter.defaultUserAgent)
        let root = try SafeXMLReader.read(response.body)
        #expect(root[attribute: "name"] == "movie")
        let key = try #require(root.children.first { $0.name == "ContentKeyList" }?.children.first)
        #expect(key[attribute: "explicitIV"] == "OFj2IjCsPJFfMAxmQxLGPw==")
        let answered = try #require(root.children.first { $0.name == "DRMSystemList" }?.children.first)
        #expect(answered[attribute: "name"] == "fps")
        #expect(answered.children.map(\.name) == ["URIExtXKey", "HLSSignalingData", "HLSSignalingData"])
        #expect(answered.children.compactMap { $0[attribute: "playlist"] } == ["multiVariant", "media"])
        #expect(Base64.decode(answered.children[0].trimmedText) == Array("skd://test/98ee5596-cd3e-a20d-163a-e382420c6eff".utf8))
    }

    @Test func refusesKeysThatDoNotFitTheRequest() throws {
        let request = try SpekeRequest(body: Array(CPIXDocuments.oneKey().utf8), spekeVersionHeader: "2.0")
        let missing = try #require(throws: SpekeError.self) { try SpekeResponseWriter.response(for: request, keys: [:]) }
        #expect(missing.httpStatus == 500 && missing.code == .keyIssuing)
        let kid = try #require(request.contentKeys.first?.kid)
        let otherIV = try IssuedKey(key: [UInt8](repeating: 1, count: 16), iv: [UInt8](repeating: 2, count: 16), skdURI: "skd://x")
        let mismatch = try #require(throws: SpekeError.self) { try SpekeResponseWriter.response(for: request, keys: [kid: otherIV]) }
        #expect(mismatch.httpStatus == 500 && mismatch.code == .keyIssuing)
    }

    @Test func issuedKeysAreChecked() {
        let key = [UInt8](repeating: 0, count: 16)
        #expect(throws: SpekeError.self) { try IssuedKey(key: [1], iv: key, skdURI: "skd://a") }
        #expect(throws: SpekeError.self) { try IssuedKey(key: key, iv: [1], skdURI: "skd://a") }
        #expect(throws: SpekeError.self) { try IssuedKey(key: key, iv: key, skdURI: "https://a") }
        #expect(throws: SpekeError.self) { try IssuedKey(key: key, iv: key, skdURI: "skd://a\"b") }
        #expect(throws: SpekeError.self) { try IssuedKey(key: key, iv: key, skdURI: "skd://a\r\nb") }
    }

    @Test func escapesValuesFromTheRequest() throws {
        let request = try SpekeRequest(
            body: Array(CPIXDocuments.oneKey(root: #"contentId="a&amp;b&lt;&quot;c" version="2.3""#).utf8), spekeVersionHeader: "2.0")
        #expect(request.contentID == "a&b<\"c")
        let response = try SpekeResponseWriter.response(for: request, keys: try Self.issued(for: request))
        #expect(try SafeXMLReader.read(response.body)[attribute: "contentId"] == "a&b<\"c")
    }
}
