import FairPlay
import Speke
import Testing
import Wire

/// The DASH-IF public test vector for encrypted content keys, opened with the primitives the answer
/// is built from (RSA-OAEP SHA-1, AES-256-CBC, HMAC-SHA512): they agree with a CPIX implementation
/// that is not ours. The vector writes the MAC key in Axinom's shape (`MACMethod/Key` holding the
/// `enc:` elements directly, a default namespace, a byte order mark), which the reader also reads.
@Suite struct DASHIFVectorTests {
    @Test func opensTheEncryptedContentKeysVector() throws {
        let cpix = CPIXNamespace.cpix
        let pskc = CPIXNamespace.pskc
        let enc = CPIXNamespace.xmlenc
        let root = try SafeXMLReader.read(Array(DASHIFVector.encryptedContentKeys.utf8))
        let privateKey = try RSAPrivateKey(pemOrDER: Array(DASHIFVector.cert1PrivateKeyPEM.utf8))
        #expect(privateKey.bits == 4096)

        func cipherValue(_ parent: XMLElementValue?) throws -> [UInt8] {
            let text = parent?.elements(enc, "CipherData").first?.elements(enc, "CipherValue").first?.trimmedText
            return try #require(text.flatMap { Base64.decode($0) })
        }
        let delivery = try #require(root.elements(cpix, "DeliveryDataList").first?.elements(cpix, "DeliveryData").first)
        let documentKeyElement = try #require(delivery.elements(cpix, "DocumentKey").first)
        #expect(documentKeyElement[attribute: "Algorithm"] == CPIXNamespace.aes256CBC)
        let wrappedDocumentKey = try cipherValue(
            documentKeyElement.elements(cpix, "Data").first?.elements(pskc, "Secret").first?.elements(pskc, "EncryptedValue").first)
        let macMethod = try #require(delivery.elements(cpix, "MACMethod").first)
        #expect(macMethod[attribute: "Algorithm"] == CPIXNamespace.hmacSHA512)
        let wrappedMACKey = try cipherValue(macMethod.elements(cpix, "Key").first)
        let documentKey = try privateKey.decryptOAEP(wrappedDocumentKey, digest: .sha1)
        let macKey = try privateKey.decryptOAEP(wrappedMACKey, digest: .sha1)
        #expect(documentKey.count == 32)
        #expect(macKey.count == 64)

        var opened: [String: String] = [:]
        for element in root.elements(cpix, "ContentKeyList").first?.elements(cpix, "ContentKey") ?? [] {
            let secret = try #require(element.elements(cpix, "Data").first?.elements(pskc, "Secret").first)
            let value = try cipherValue(secret.elements(pskc, "EncryptedValue").first)
            #expect(value.count == 48)
            let mac = try #require(Base64.decode(secret.elements(pskc, "ValueMAC").first?.trimmedText ?? ""))
            #expect(FairPlayCrypto.constantTimeEqual(mac, try SpekeCrypto.hmacSHA512(key: macKey, value)))
            // One flipped bit in the encrypted value and the MAC no longer checks (the vector's Invalid_WrongMac case).
            var tampered = value
            tampered[20] ^= 0x01
            #expect(!FairPlayCrypto.constantTimeEqual(mac, try SpekeCrypto.hmacSHA512(key: macKey, tampered)))
            let key = try SpekeCrypto.aes256CBCDecrypt(key: documentKey, iv: Array(value[..<16]), Array(value[16...]))
            opened[element[attribute: "kid"] ?? ""] = Base64.encode(key)
        }
        #expect(opened == DASHIFVector.plaintextKeys)
    }
}
