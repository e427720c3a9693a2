import FairPlay
import Speke
import Wire

/// Opens the encrypted content keys of a CPIX document sent to us (CPIX 2.3, "Keys used to secure
/// the CPIX document", "Authenticated encryption"; the algorithms ``ContentKeyEncryption`` writes).
///
/// The `DeliveryData` meant for us is the one whose document key our private key decrypts
/// (RSA-OAEP, SHA-1 and MGF1-SHA-1): a wrong recipient's ciphertext fails OAEP's check. Its
/// `MACMethod` must be HMAC-SHA512 with a MAC key we decrypt the same way, and every content key's
/// `ValueMAC` (HMAC-SHA512 over the `CipherValue`, IV and ciphertext) is checked in constant time
/// before the key is decrypted: a key that is not authenticated is never used, so a changed byte
/// can neither give us a wrong key nor make the padding check an oracle. Both the AWS shape
/// (`MACMethod/Key/pskc:EncryptedValue`) and the DASH-IF vector's (`MACMethod/Key` holding the
/// `enc:` elements) are read. The two secrets are cleansed when this value goes away.
final class CPIXKeyDecryption {
    /// The most `DeliveryData` a document may hold.
    static let maximumRecipients = 64

    private var documentKey: [UInt8]
    private var macKey: [UInt8]

    /// Finds our `DeliveryData` and opens its document and MAC keys.
    /// - Throws: `.invalidDocument` when no private key is given, none of the `DeliveryData` is
    ///   ours, or an algorithm or element is not the one CPIX mandates.
    init(root: XMLElementValue, privateKey: RSAPrivateKey?) throws(CPIXFileError) {
        let cpix = CPIXNamespace.cpix
        guard let privateKey else {
            throw CPIXKeyDocument.invalid("the keys are encrypted; give the recipient's private key with --private-key")
        }
        let deliveries = root.elements(cpix, "DeliveryDataList").flatMap { $0.elements(cpix, "DeliveryData") }
        guard !deliveries.isEmpty else { throw CPIXKeyDocument.invalid("the keys are encrypted but the document has no cpix:DeliveryData") }
        // Each recipient tried costs an RSA decryption: a document of thousands of them would make
        // the import a CPU sink. Real documents name a handful.
        guard deliveries.count <= Self.maximumRecipients else {
            throw CPIXKeyDocument.invalid("the document has \(deliveries.count) cpix:DeliveryData, more than \(Self.maximumRecipients)")
        }
        for delivery in deliveries {
            guard let documentKeyElement = delivery.elements(cpix, "DocumentKey").first else { continue }
            if let algorithm = documentKeyElement[attribute: "Algorithm"], algorithm != CPIXNamespace.aes256CBC {
                throw CPIXKeyDocument.invalid("DocumentKey@Algorithm \(algorithm.prefix(100)) is not \(CPIXNamespace.aes256CBC)")
            }
            guard
                let encrypted = documentKeyElement.elements(cpix, "Data").first?.elements(CPIXNamespace.pskc, "Secret").first?
                    .elements(CPIXNamespace.pskc, "EncryptedValue").first
            else { throw CPIXKeyDocument.invalid("a DocumentKey holds no Data/pskc:Secret/pskc:EncryptedValue") }
            try Self.check(encrypted, algorithm: CPIXNamespace.rsaOAEPMGF1P, what: "the document key")
            let wrapped = try Self.cipherValue(encrypted, what: "the document key")
            guard var opened = try? privateKey.decryptOAEP(wrapped, digest: .sha1) else { continue }
            guard opened.count == 32 else {
                FairPlayCrypto.cleanse(&opened)
                throw CPIXKeyDocument.invalid("the document key is not 32 bytes (AES-256)")
            }
            var documentKey = opened
            FairPlayCrypto.cleanse(&opened)
            do throws(CPIXFileError) {
                var macKey = try Self.macKey(delivery, privateKey: privateKey)
                do throws(CPIXFileError) {
                    // AWS's shape MACs the wrapped document key too; checked when present.
                    if let mac = documentKeyElement.elements(cpix, "Data").first?.elements(CPIXNamespace.pskc, "Secret").first?
                        .elements(CPIXNamespace.pskc, "ValueMAC").first
                    {
                        try Self.verify(mac, over: wrapped, macKey: macKey, what: "the document key")
                    }
                } catch {
                    FairPlayCrypto.cleanse(&macKey)
                    throw error
                }
                self.documentKey = documentKey
                self.macKey = macKey
                return
            } catch {
                FairPlayCrypto.cleanse(&documentKey)
                throw error
            }
        }
        throw CPIXKeyDocument.invalid("the keys are encrypted for another recipient: --private-key opens no DeliveryData's document key")
    }

    deinit {
        FairPlayCrypto.cleanse(&documentKey)
        FairPlayCrypto.cleanse(&macKey)
    }

    /// The content key of a `pskc:Secret` holding `EncryptedValue` and `ValueMAC`, the MAC checked first.
    func contentKey(_ secret: XMLElementValue, keyID: KID) throws(CPIXFileError) -> [UInt8] {
        let what = "ContentKey \(keyID)"
        guard let encrypted = secret.elements(CPIXNamespace.pskc, "EncryptedValue").first else {
            throw CPIXKeyDocument.invalid("\(what) has no pskc:EncryptedValue")
        }
        try Self.check(encrypted, algorithm: CPIXNamespace.aes256CBC, what: what)
        let value = try Self.cipherValue(encrypted, what: what)
        guard let mac = secret.elements(CPIXNamespace.pskc, "ValueMAC").first else {
            throw CPIXKeyDocument.invalid("\(what) is encrypted without a ValueMAC, so it cannot be authenticated")
        }
        try Self.verify(mac, over: value, macKey: macKey, what: what)
        // IV (16 bytes) then AES-256-CBC of the PKCS #7-padded key: 48 bytes for a 16-byte key.
        guard value.count >= 32, value.count % 16 == 0 else { throw CPIXKeyDocument.invalid("the CipherValue of \(what) is not an IV and whole blocks") }
        do throws(SpekeError) {
            return try SpekeCrypto.aes256CBCDecrypt(key: documentKey, iv: Array(value[..<16]), Array(value[16...]))
        } catch {
            throw CPIXKeyDocument.invalid("\(what) does not decrypt under the document key")
        }
    }

    /// The MAC key of `MACMethod`, HMAC-SHA512 only.
    private static func macKey(_ delivery: XMLElementValue, privateKey: RSAPrivateKey) throws(CPIXFileError) -> [UInt8] {
        let cpix = CPIXNamespace.cpix
        guard let method = delivery.elements(cpix, "MACMethod").first else {
            throw CPIXKeyDocument.invalid("the DeliveryData has no MACMethod, so its keys cannot be authenticated")
        }
        guard method[attribute: "Algorithm"] == CPIXNamespace.hmacSHA512 else {
            throw CPIXKeyDocument.invalid("MACMethod@Algorithm is not \(CPIXNamespace.hmacSHA512)")
        }
        guard let key = method.elements(cpix, "Key").first else { throw CPIXKeyDocument.invalid("MACMethod has no cpix:Key") }
        let encrypted = key.elements(CPIXNamespace.pskc, "EncryptedValue").first ?? key
        try check(encrypted, algorithm: CPIXNamespace.rsaOAEPMGF1P, what: "the MAC key")
        let wrapped = try cipherValue(encrypted, what: "the MAC key")
        guard var opened = try? privateKey.decryptOAEP(wrapped, digest: .sha1) else {
            throw CPIXKeyDocument.invalid("the MAC key does not decrypt with --private-key")
        }
        guard opened.count >= 16 else {
            FairPlayCrypto.cleanse(&opened)
            throw CPIXKeyDocument.invalid("the MAC key is shorter than 16 bytes")
        }
        return opened
    }

    /// An `enc:EncryptionMethod`, when present, must name `algorithm`.
    private static func check(_ encrypted: XMLElementValue, algorithm: String, what: String) throws(CPIXFileError) {
        if let method = encrypted.elements(CPIXNamespace.xmlenc, "EncryptionMethod").first, method[attribute: "Algorithm"] != algorithm {
            throw CPIXKeyDocument.invalid("\(what) is encrypted with an algorithm other than \(algorithm)")
        }
    }

    private static func cipherValue(_ encrypted: XMLElementValue, what: String) throws(CPIXFileError) -> [UInt8] {
        let text = encrypted.elements(CPIXNamespace.xmlenc, "CipherData").first?.elements(CPIXNamespace.xmlenc, "CipherValue").first?.trimmedText
        guard let text, let bytes = Base64.decode(text.filter { !$0.isWhitespace }), !bytes.isEmpty else {
            throw CPIXKeyDocument.invalid("\(what) has no base64 enc:CipherData/enc:CipherValue")
        }
        return bytes
    }

    private static func verify(_ element: XMLElementValue, over value: [UInt8], macKey: [UInt8], what: String) throws(CPIXFileError) {
        guard let mac = Base64.decode(element.trimmedText.filter { !$0.isWhitespace }) else {
            throw CPIXKeyDocument.invalid("the ValueMAC of \(what) is not base64")
        }
        let expected: [UInt8]
        do throws(SpekeError) {
            expected = try SpekeCrypto.hmacSHA512(key: macKey, value)
        } catch {
            throw CPIXKeyDocument.invalid("the MAC of \(what) cannot be computed: \(error.message)")
        }
        guard mac.count == expected.count, FairPlayCrypto.constantTimeEqual(mac, expected) else {
            throw CPIXKeyDocument.invalid("the ValueMAC of \(what) does not check: the document was changed, or was not encrypted for this key")
        }
    }
}
