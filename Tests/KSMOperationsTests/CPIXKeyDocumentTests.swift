import FairPlay
import Foundation
import KSMOperations
import KSMService
import KSMTestSupport
import Licensing
import Speke
import Testing
import Wire

/// Reading the keys of a CPIX file for `ksm admin import-cpix`: SPEKE-shaped answers in the clear
/// and encrypted for us (every MAC checked first), plain DASH-IF CPIX placed by content, period and
/// KID, and the documents that must be refused.
@Suite(.timeLimit(.minutes(2))) struct CPIXKeyDocumentTests {
    let tenant = try! StoreIdentifier("acme")

    /// An answer as `ksm speke` writes it for two periods of VIDEO and AUDIO, with known keys.
    func answer(recipient: [UInt8]? = nil) throws -> (document: [UInt8], keys: [KID: IssuedKey]) {
        let request = CPIXExportRequest(
            tenant: tenant, contentID: "live-1", periods: [CPIXExportPeriod(index: 4, start: "2030-01-01T00:00:00Z"), CPIXExportPeriod(index: 5)],
            recipientCertificateDER: recipient)
        let speke = try request.spekeRequest()
        var keys: [KID: IssuedKey] = [:]
        for (offset, key) in speke.contentKeys.enumerated() {
            let period = speke.periods(for: key.kid).first?.index.map(String.init)
            keys[key.kid] = try IssuedKey(
                key: [UInt8](repeating: UInt8(offset + 1), count: 16), iv: [UInt8](repeating: UInt8(0xA0 + offset), count: 16),
                skdURI: PackagerAssetID.uri(contentID: "live-1", periodName: period, keyID: key.kid.bytes))
        }
        return (try SpekeResponseWriter.response(for: speke, keys: keys).body, keys)
    }

    @Test func readsEveryKeyOfAnAnswerInTheClearWithItsURIPeriodAndTrack() throws {
        let (bytes, issued) = try answer()
        let document = try CPIXKeyDocument(bytes: bytes, privateKey: nil)
        #expect(document.contentID == "live-1")
        #expect(document.keys.count == 4)
        for key in document.keys {
            let expected = try #require(issued[key.keyID])
            #expect(key.contentKey == expected.key)
            #expect(key.explicitIV == expected.iv)
            #expect(key.skdURI == expected.skdURI)
        }
        #expect(document.keys.map { $0.period?.index ?? 0 } == [4, 4, 5, 5])
        #expect(document.keys.first?.period?.start == "2030-01-01T00:00:00Z")
        #expect(document.keys.map { $0.trackType ?? "" } == ["VIDEO", "AUDIO", "VIDEO", "AUDIO"])
        let placements = try CPIXKeyImporter.placements(document, options: .init(tenant: tenant))
        #expect(placements.map(\.uri) == document.keys.map { $0.skdURI ?? "" })
        #expect(placements.first?.keyPeriod == (try PackagerKeyPeriod(index: 4, startMilliseconds: 1_893_456_000_000)))
        #expect(placements.first?.trackType?.value == "VIDEO")
    }

    @Test func opensKeysEncryptedForUsAndRefusesAnyKeyWhoseMACDoesNotCheck() async throws {
        let recipient = try await TestRecipientCertificate.make()
        defer { recipient.remove() }
        let (bytes, issued) = try answer(recipient: recipient.certificateDER)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!text.contains("PlainValue"))
        let privateKey = try RSAPrivateKey(pemOrDER: try recipient.privateKeyPEM())
        let document = try CPIXKeyDocument(bytes: bytes, privateKey: privateKey)
        #expect(document.keys.map(\.contentKey) == document.keys.map { issued[$0.keyID]?.key ?? [] })

        // The first content key's ValueMAC changed, and its CipherValue changed: each refused.
        // One per content key, and AWS's shape MACs the wrapped document and MAC keys too.
        #expect(text.ranges(of: "<pskc:ValueMAC>").count == 4 + 2)
        let firstKeyMAC = try #require(
            text.range(of: "<cpix:ContentKeyList>").flatMap { text.range(of: "<pskc:ValueMAC>", range: $0.upperBound..<text.endIndex) })
        var tampered = text
        let at = firstKeyMAC.upperBound
        tampered.replaceSubrange(at...at, with: text[at] == "A" ? "B" : "A")
        let error = try #require(throws: CPIXFileError.self) { try CPIXKeyDocument(bytes: Array(tampered.utf8), privateKey: privateKey) }
        #expect(error.code == .invalidDocument)
        #expect(error.message.contains("ValueMAC of ContentKey"), "\(error.message)")
        let cipher = try #require(text.range(of: "<cpix:ContentKeyList>").flatMap { text.range(of: "<enc:CipherValue>", range: $0.upperBound..<text.endIndex) })
        var changed = text
        changed.replaceSubrange(cipher.upperBound...cipher.upperBound, with: text[cipher.upperBound] == "A" ? "B" : "A")
        let changedError = try #require(throws: CPIXFileError.self) { try CPIXKeyDocument(bytes: Array(changed.utf8), privateKey: privateKey) }
        #expect(changedError.message.contains("ValueMAC of ContentKey"), "\(changedError.message)")

        // Every recipient tried costs an RSA decryption, so their number is capped.
        let delivery = try #require(
            text.range(of: "<cpix:DeliveryData ").flatMap { start in text.range(of: "</cpix:DeliveryData>").map { start.lowerBound..<$0.upperBound } })
        let crowded = text.replacingCharacters(in: delivery, with: String(repeating: String(text[delivery]), count: 65))
        let crowdedError = try #require(throws: CPIXFileError.self) { try CPIXKeyDocument(bytes: Array(crowded.utf8), privateKey: privateKey) }
        #expect(crowdedError.message.contains("65 cpix:DeliveryData, more than 64"), "\(crowdedError.message)")

        let missing = try #require(throws: CPIXFileError.self) { try CPIXKeyDocument(bytes: bytes, privateKey: nil) }
        #expect(missing.message.contains("--private-key"))
        let other = try await TestRecipientCertificate.make()
        defer { other.remove() }
        let wrong = try #require(throws: CPIXFileError.self) {
            try CPIXKeyDocument(bytes: bytes, privateKey: try RSAPrivateKey(pemOrDER: try other.privateKeyPEM()))
        }
        #expect(wrong.message.contains("another recipient"), "\(wrong.message)")
    }

    @Test func opensTheDASHIFVectorEncryptedByAnotherImplementation() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/cpix")
        let bytes = Array(try Data(contentsOf: fixtures.appendingPathComponent("dashif-encrypted-content-keys.xml")))
        let privateKey = try RSAPrivateKey(pemOrDER: Array(try Data(contentsOf: fixtures.appendingPathComponent("dashif-cert1-private-key.pem"))))
        let document = try CPIXKeyDocument(bytes: bytes, privateKey: privateKey)
        let opened = Dictionary(uniqueKeysWithValues: document.keys.map { ($0.keyID.description, Base64.encode($0.contentKey)) })
        #expect(
            opened == [
                "bd5adf51-cf04-410f-aac3-ec63a69e929e": "3rWoHYasQubO6HbJGrGtLw==", "d2920429-87ab-41e6-a4c5-a8c836b6312e": "O5w9FdZiwmQK4uIXzAziaQ==",
                "e17ba4b8-faff-4d30-bcba-7485e3f2e884": "Cwu/3hSBBRQ7SurBdZD5ow==", "0ae6b9ad-92d2-4ebe-882b-1d07dee70715": "FB6/Eck9Y9SXy6bY8UU/Mw==",
            ])
        // No FairPlay signaling and no contentId: nothing names the assets, so the import refuses.
        let unplaced = try #require(throws: CPIXFileError.self) {
            try CPIXKeyImporter.placements(document, options: .init(tenant: tenant, defaultIV: [UInt8](repeating: 0, count: 16)))
        }
        #expect(unplaced.message.contains("no contentId"), "\(unplaced.message)")
    }

    /// A DASH-IF CPIX document as a packager might keep it: a default namespace, no DRM signaling,
    /// no track types.
    static let plain = """
        <?xml version="1.0" encoding="UTF-8"?>
        <CPIX xmlns="urn:dashif:org:cpix" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc" contentId="movie 1">
          <ContentKeyList>
            <ContentKey kid="11111111-2222-3333-4444-555555555555" explicitIV="AAECAwQFBgcICQoLDA0ODw==">
              <Data><pskc:Secret><pskc:PlainValue>EREREREREREREREREREREQ==</pskc:PlainValue></pskc:Secret></Data>
            </ContentKey>
            <ContentKey kid="66666666-7777-8888-9999-aaaaaaaaaaaa">
              <Data><pskc:Secret><pskc:PlainValue>IiIiIiIiIiIiIiIiIiIiIg==</pskc:PlainValue></pskc:Secret></Data>
            </ContentKey>
          </ContentKeyList>
          <DRMSystemList>
            <DRMSystem kid="11111111-2222-3333-4444-555555555555" systemId="edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"><PSSH>AAAA</PSSH></DRMSystem>
          </DRMSystemList>
        </CPIX>
        """

    @Test func plainCPIXWithoutFairPlaySignalingIsPlacedByContentAndKID() throws {
        let document = try CPIXKeyDocument(bytes: Array(Self.plain.utf8), privateKey: nil)
        #expect(document.keys.map(\.skdURI) == [nil, nil])
        let refused = try #require(throws: CPIXFileError.self) { try CPIXKeyImporter.placements(document, options: .init(tenant: tenant)) }
        #expect(refused.message.contains("66666666-7777-8888-9999-aaaaaaaaaaaa has no explicitIV"), "\(refused.message)")
        let iv = [UInt8](repeating: 7, count: 16)
        let placements = try CPIXKeyImporter.placements(document, options: .init(tenant: tenant, defaultIV: iv))
        #expect(placements.map(\.uri) == ["skd://movie%201/11111111222233334444555555555555", "skd://movie%201/66666666777788889999aaaaaaaaaaaa"])
        #expect(placements.map(\.iv) == [Array(0...15), iv])
        #expect(placements.allSatisfy { $0.keyPeriod == nil && $0.trackType == nil })
    }

    @Test func theURIOfAnHLSTagIsItsQuotedURIAttribute() {
        #expect(
            CPIXKeyDocument.uriAttribute(#"#EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://a,b/c",KEYFORMAT="com.apple.streamingkeydelivery""#) == "skd://a,b/c")
        #expect(CPIXKeyDocument.uriAttribute(#"#EXT-X-SESSION-KEY:KEYFORMATVERSIONS="1",URI="skd://x""#) == "skd://x")
        #expect(CPIXKeyDocument.uriAttribute("#EXT-X-KEY:METHOD=SAMPLE-AES") == nil)
        #expect(CPIXKeyDocument.uriAttribute(#"#EXT-X-KEY:URI="skd://unterminated"#) == nil)
    }

    @Test(
        "documents that cannot be imported are refused with the reason",
        arguments: [
            ("<!DOCTYPE x [<!ENTITY a \"b\">]><CPIX xmlns=\"urn:dashif:org:cpix\">&a;</CPIX>", "document type declaration"),
            ("<CPIX xmlns=\"urn:dashif:org:cpix\"><ContentKeyList>", "not well-formed"),
            ("<CPIX xmlns=\"urn:other\"/>", "not cpix:CPIX"),
            ("<CPIX xmlns=\"urn:dashif:org:cpix\"/>", "exactly one cpix:ContentKeyList"),
            (CPIXKeyDocumentTests.plain.replacingOccurrences(of: "EREREREREREREREREREREQ==", with: "ERERERERERERERERERER"), "15 bytes, not 16"),
            (
                CPIXKeyDocumentTests.plain.replacingOccurrences(
                    of: "<Data><pskc:Secret><pskc:PlainValue>IiIiIiIiIiIiIiIiIiIiIg==</pskc:PlainValue></pskc:Secret></Data>", with: ""),
                "the file is a request"
            ),
            (
                CPIXKeyDocumentTests.plain.replacingOccurrences(
                    of: "</ContentKeyList>",
                    with: """
                        </ContentKeyList><ContentKeyPeriodList><ContentKeyPeriod id="p1" index="1"/><ContentKeyPeriod id="p2" index="2"/></ContentKeyPeriodList>
                        <ContentKeyUsageRuleList><ContentKeyUsageRule kid="11111111-2222-3333-4444-555555555555" intendedTrackType="SD">
                        <KeyPeriodFilter periodId="p1"/><KeyPeriodFilter periodId="p2"/><VideoFilter/></ContentKeyUsageRule></ContentKeyUsageRuleList>
                        """), "filtered on 2 key periods"
            ),
            (
                CPIXKeyDocumentTests.plain.replacingOccurrences(
                    of: "<PSSH>AAAA</PSSH></DRMSystem>",
                    with:
                        "<PSSH>AAAA</PSSH></DRMSystem><DRMSystem kid=\"11111111-2222-3333-4444-555555555555\" systemId=\"94ce86fb-07ff-4f43-adb8-93d2fa968ca2\"><URIExtXKey>\(Base64.encode(Array("https://example.com/key".utf8)))</URIExtXKey></DRMSystem>"
                ), "not an skd:// URI"
            ),
        ])
    func refusesWhatCannotBeImported(document: String, reason: String) throws {
        let error = try #require(throws: CPIXFileError.self) { try CPIXKeyDocument(bytes: Array(document.utf8), privateKey: nil) }
        #expect(error.code == .invalidDocument)
        #expect(error.message.contains(reason), "\(error.message)")
    }
}
