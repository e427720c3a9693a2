import FairPlay
import Foundation
import KSMTestSupport
import Speke
import Testing
import Wire

/// Content key encryption for a `DeliveryDataList` request: the answer opened with the packager's
/// private key, by our own primitives and by an independent implementation (Python `cryptography`).
@Suite(.serialized, .timeLimit(.minutes(3))) struct ContentKeyEncryptionTests {
    static let python3: String? =
        ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static func encryptedExchange(_ certificate: PackagerCertificate) throws -> (SpekeRequest, [KID: IssuedKey], SpekeResponse) {
        let text = CPIXDocuments.awsFairPlayRequest.replacingOccurrences(
            of: "<cpix:ContentKeyList>", with: certificate.deliveryDataList + "<cpix:ContentKeyList>"
        ).replacingOccurrences(of: #"xmlns:pskc="#, with: #"xmlns:ds="http://www.w3.org/2000/09/xmldsig#" xmlns:pskc="#)
        let request = try SpekeRequest(body: Array(text.utf8), spekeVersionHeader: "2.0")
        var keys: [KID: IssuedKey] = [:]
        for key in request.contentKeys {
            keys[key.kid] = try IssuedKey(key: FairPlayCrypto.randomBytes(16), iv: FairPlayCrypto.randomBytes(16), skdURI: "skd://test/\(key.kidText)")
        }
        return (request, keys, try SpekeResponseWriter.response(for: request, keys: keys))
    }

    @Test(.enabled(if: PackagerCertificate.openssl != nil, "openssl is not installed"))
    func answersEncryptedKeysThatOurPrimitivesOpen() async throws {
        let certificate = try await PackagerCertificate.make()
        defer { try? FileManager.default.removeItem(at: certificate.directory) }
        let (request, keys, response) = try Self.encryptedExchange(certificate)
        #expect(request.deliveryRecipients.count == 1)
        let cpix = CPIXNamespace.cpix
        let pskc = CPIXNamespace.pskc
        let enc = CPIXNamespace.xmlenc
        let root = try SafeXMLReader.read(response.body)
        #expect(root.children.map(\.name) == ["DeliveryDataList", "ContentKeyList", "DRMSystemList", "ContentKeyPeriodList", "ContentKeyUsageRuleList"])
        let delivery = try #require(root.elements(cpix, "DeliveryDataList").first?.elements(cpix, "DeliveryData").first)
        #expect(delivery[attribute: "id"] == "origin-1")
        #expect(delivery.children.map(\.name) == ["DeliveryKey", "DocumentKey", "MACMethod"])

        let privateKey = try RSAPrivateKey(pemOrDER: certificate.privateKeyPEM)
        func cipherValue(_ encryptedValue: XMLElementValue?) throws -> [UInt8] {
            let text = encryptedValue?.elements(enc, "CipherData").first?.elements(enc, "CipherValue").first?.trimmedText
            return try #require(text.flatMap { Base64.decode($0) })
        }
        let documentKeyElement = try #require(delivery.elements(cpix, "DocumentKey").first)
        #expect(documentKeyElement[attribute: "Algorithm"] == CPIXNamespace.aes256CBC)
        let documentSecret = try #require(documentKeyElement.elements(cpix, "Data").first?.elements(pskc, "Secret").first)
        let documentEncrypted = documentSecret.elements(pskc, "EncryptedValue").first
        #expect(documentEncrypted?.elements(enc, "EncryptionMethod").first?[attribute: "Algorithm"] == CPIXNamespace.rsaOAEPMGF1P)
        let documentKey = try privateKey.decryptOAEP(try cipherValue(documentEncrypted), digest: .sha1)
        let macMethod = try #require(delivery.elements(cpix, "MACMethod").first)
        #expect(macMethod[attribute: "Algorithm"] == CPIXNamespace.hmacSHA512)
        let macKeyElement = try #require(macMethod.elements(cpix, "Key").first)
        let wrappedMACKey = try cipherValue(macKeyElement.elements(pskc, "EncryptedValue").first)
        let macKey = try privateKey.decryptOAEP(wrappedMACKey, digest: .sha1)
        #expect(documentKey.count == 32 && macKey.count == 64)
        #expect(Base64.decode(macKeyElement.elements(pskc, "ValueMAC").first?.trimmedText ?? "") == (try SpekeCrypto.hmacSHA512(key: macKey, wrappedMACKey)))

        for element in root.elements(cpix, "ContentKeyList").first?.elements(cpix, "ContentKey") ?? [] {
            let kid = try #require(element[attribute: "kid"].flatMap(KID.init(uuid:)))
            let secret = try #require(element.elements(cpix, "Data").first?.elements(pskc, "Secret").first)
            #expect(secret.elements(pskc, "PlainValue").isEmpty)
            let encrypted = secret.elements(pskc, "EncryptedValue").first
            #expect(encrypted?.elements(enc, "EncryptionMethod").first?[attribute: "Algorithm"] == CPIXNamespace.aes256CBC)
            let value = try cipherValue(encrypted)
            #expect(value.count == 48)
            let mac = try #require(Base64.decode(secret.elements(pskc, "ValueMAC").first?.trimmedText ?? ""))
            #expect(mac == (try SpekeCrypto.hmacSHA512(key: macKey, value)))
            let plain = try SpekeCrypto.aes256CBCDecrypt(key: documentKey, iv: Array(value[..<16]), Array(value[16...]))
            #expect(plain == keys[kid]?.key)
            #expect(element[attribute: "explicitIV"] == keys[kid].map { Base64.encode($0.iv) })
        }
    }

    /// The independent check: Python's `cryptography` opens the answer with the private key (RSA-OAEP
    /// SHA-1/MGF1-SHA-1, AES-256-CBC, PKCS#7), checks every ValueMAC (HMAC-SHA512) and prints each key.
    @Test(.enabled(if: python3 != nil && PackagerCertificate.openssl != nil, "python3 or openssl is not installed"))
    func pythonCryptographyOpensTheAnswer() async throws {
        let certificate = try await PackagerCertificate.make()
        defer { try? FileManager.default.removeItem(at: certificate.directory) }
        let (_, keys, response) = try Self.encryptedExchange(certificate)
        let responsePath = certificate.directory.appendingPathComponent("response.xml")
        try Data(response.body).write(to: responsePath)
        let result = try await ProcessRunner.run(
            URL(fileURLWithPath: try #require(Self.python3)), ["-c", Self.oracle, responsePath.path, certificate.privateKeyPath], timeout: .seconds(120))
        #expect(result.succeeded, "\(result.stderrText)")
        let lines = Set(String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init))
        let expected = Set(keys.map { "\($0.key) \($0.value.key.hexString)" })
        #expect(lines == expected)
    }

    @Test(.enabled(if: PackagerCertificate.openssl != nil, "openssl is not installed"))
    func refusesACertificateUnder2048Bits() async throws {
        let certificate = try await PackagerCertificate.make(bits: 1024)
        defer { try? FileManager.default.removeItem(at: certificate.directory) }
        let error = try #require(throws: SpekeError.self) { try Self.encryptedExchange(certificate) }
        #expect(error.code == .invalidDeliveryCertificate && error.httpStatus == 422)
        #expect(error.message == "Invalid DeliveryData certificate: the RSA key has 1024 bits, fewer than 2048")
    }

    @Test func refusesACertificateThatIsNotOne() throws {
        let request = CPIXDocuments.oneKey(
            extra:
                #"<cpix:DeliveryDataList><cpix:DeliveryData><cpix:DeliveryKey><ds:X509Data><ds:X509Certificate>AAAA</ds:X509Certificate></ds:X509Data></cpix:DeliveryKey></cpix:DeliveryData></cpix:DeliveryDataList>"#
        )
        let error = try #require(throws: SpekeError.self) { try SpekeRequest(body: Array(request.utf8), spekeVersionHeader: "2.0") }
        #expect(error.code == .invalidDeliveryCertificate)
    }

    @Test func aes256CBCAndHMACSHA512MatchKnownAnswers() throws {
        // NIST SP 800-38A F.2.5 (CBC-AES256.Encrypt), first block; PKCS#7 adds a second block.
        let key = try #require(HexEncoding.decode("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"))
        let iv = try #require(HexEncoding.decode("000102030405060708090a0b0c0d0e0f"))
        let plain = try #require(HexEncoding.decode("6bc1bee22e409f96e93d7e117393172a"))
        let sealed = try SpekeCrypto.aes256CBCEncrypt(key: key, iv: iv, plain)
        #expect(sealed.count == 32)
        #expect(HexEncoding.encode(Array(sealed[..<16])) == "f58c4c04d6e5f1ba779eabfb5f7bfbd6")
        #expect(try SpekeCrypto.aes256CBCDecrypt(key: key, iv: iv, sealed) == plain)
        // RFC 4231, test case 2.
        let mac = try SpekeCrypto.hmacSHA512(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8))
        #expect(
            HexEncoding.encode(mac)
                == "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737")
    }

    static let oracle = #"""
        import base64, hashlib, hmac, sys
        import xml.etree.ElementTree as ET
        from cryptography.hazmat.primitives import hashes, padding as symmetric_padding, serialization
        from cryptography.hazmat.primitives.asymmetric import padding
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        NS = {"cpix": "urn:dashif:org:cpix", "pskc": "urn:ietf:params:xml:ns:keyprov:pskc", "enc": "http://www.w3.org/2001/04/xmlenc#"}
        AES = "http://www.w3.org/2001/04/xmlenc#aes256-cbc"
        RSA = "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p"
        MAC = "http://www.w3.org/2001/04/xmldsig-more#hmac-sha512"
        root = ET.parse(sys.argv[1]).getroot()
        private_key = serialization.load_pem_private_key(open(sys.argv[2], "rb").read(), password=None)
        oaep = padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()), algorithm=hashes.SHA1(), label=None)

        def b64(element):
            return base64.b64decode("".join(element.text.split()))

        def cipher_value(encrypted, algorithm):
            assert encrypted.find("enc:EncryptionMethod", NS).get("Algorithm") == algorithm
            return b64(encrypted.find("enc:CipherData/enc:CipherValue", NS))

        delivery = root.find("cpix:DeliveryDataList/cpix:DeliveryData", NS)
        document = delivery.find("cpix:DocumentKey", NS)
        assert document.get("Algorithm") == AES
        wrapped_document_key = cipher_value(document.find("cpix:Data/pskc:Secret/pskc:EncryptedValue", NS), RSA)
        method = delivery.find("cpix:MACMethod", NS)
        assert method.get("Algorithm") == MAC
        wrapped_mac_key = cipher_value(method.find("cpix:Key/pskc:EncryptedValue", NS), RSA)
        document_key = private_key.decrypt(wrapped_document_key, oaep)
        mac_key = private_key.decrypt(wrapped_mac_key, oaep)
        assert len(document_key) == 32 and len(mac_key) == 64
        for value, mac in [(wrapped_document_key, document.find("cpix:Data/pskc:Secret/pskc:ValueMAC", NS)), (wrapped_mac_key, method.find("cpix:Key/pskc:ValueMAC", NS))]:
            assert hmac.compare_digest(b64(mac), hmac.new(mac_key, value, hashlib.sha512).digest()), "wrapped key MAC"
        for content_key in root.findall("cpix:ContentKeyList/cpix:ContentKey", NS):
            secret = content_key.find("cpix:Data/pskc:Secret", NS)
            assert secret.find("pskc:PlainValue", NS) is None
            value = cipher_value(secret.find("pskc:EncryptedValue", NS), AES)
            assert len(value) == 48
            assert hmac.compare_digest(b64(secret.find("pskc:ValueMAC", NS)), hmac.new(mac_key, value, hashlib.sha512).digest()), "content key MAC"
            decryptor = Cipher(algorithms.AES(document_key), modes.CBC(value[:16])).decryptor()
            padded = decryptor.update(value[16:]) + decryptor.finalize()
            unpadder = symmetric_padding.PKCS7(128).unpadder()
            key = unpadder.update(padded) + unpadder.finalize()
            assert len(key) == 16
            print(content_key.get("kid"), key.hex())
        """#
}
