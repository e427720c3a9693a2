import FairPlay
import Wire

/// Content key encryption for one response (AWS SPEKE v2 "Content key encryption"; CPIX 2.3
/// "Keys used to secure the CPIX document", "Authenticated encryption", "Mandatory algorithms").
///
/// "For every CPIX document, a Document Key is created" (256 bits) and "a MAC Key is created"
/// (512 bits, the size AWS's reference server and Axinom use); both come from OpenSSL's
/// `RAND_bytes`, are RSA-OAEP-encrypted (SHA-1, MGF1-SHA-1, empty label) for each recipient's
/// certificate, and are cleansed when this value goes away. Each content key becomes
/// `IV || AES-256-CBC(document key, IV, PKCS#7(key))` with a fresh random IV (48 bytes), and its
/// `ValueMAC` is HMAC-SHA512(MAC key, those 48 bytes), "calculated over the data in the
/// CipherValue element (the concatenated IV and encrypted Content Key)".
///
/// XML shapes are AWS's examples (its content-key-encryption page and reference server):
/// `DocumentKey/Data/Secret/{EncryptedValue, ValueMAC}` and `MACMethod/Key/{EncryptedValue,
/// ValueMAC}`, each RSA ciphertext with a ValueMAC over it as AWS's reference server writes.
/// A final class: one owner of the two secrets, cleansed in place in `deinit`. `@unchecked
/// Sendable`: the secrets are written only by `init` and `deinit`, when no other reference exists.
package final class ContentKeyEncryption: @unchecked Sendable {
    private var documentKey: [UInt8]
    private var macKey: [UInt8]

    package init() {
        documentKey = FairPlayCrypto.randomBytes(32)
        macKey = FairPlayCrypto.randomBytes(64)
    }

    deinit {
        FairPlayCrypto.cleanse(&documentKey)
        FairPlayCrypto.cleanse(&macKey)
    }

    /// `pskc:Secret` holding `key` encrypted and its MAC.
    package func secret(for key: [UInt8]) throws(SpekeError) -> XMLElementValue {
        let iv = FairPlayCrypto.randomBytes(16)
        let ciphertext = try SpekeCrypto.aes256CBCEncrypt(key: documentKey, iv: iv, key)
        let cipherValue = iv + ciphertext
        return try Self.secret(cipherValue, algorithm: CPIXNamespace.aes256CBC, mac: SpekeCrypto.hmacSHA512(key: macKey, cipherValue))
    }

    /// `cpix:DeliveryData` for `recipient`: its `DeliveryKey` as read, then `DocumentKey` and `MACMethod`.
    package func deliveryData(for recipient: DeliveryRecipient) throws(SpekeError) -> XMLElementValue {
        let cpix = CPIXNamespace.cpix
        let wrappedDocumentKey = try wrap(documentKey, for: recipient)
        let wrappedMACKey = try wrap(macKey, for: recipient)
        let documentSecret = try Self.secret(
            wrappedDocumentKey, algorithm: CPIXNamespace.rsaOAEPMGF1P, mac: SpekeCrypto.hmacSHA512(key: macKey, wrappedDocumentKey))
        let macSecret = try Self.secret(wrappedMACKey, algorithm: CPIXNamespace.rsaOAEPMGF1P, mac: SpekeCrypto.hmacSHA512(key: macKey, wrappedMACKey))
        let documentKeyElement = XMLElementValue(
            cpix, "DocumentKey", attributes: [XMLAttribute("Algorithm", CPIXNamespace.aes256CBC)],
            children: [XMLElementValue(cpix, "Data", children: [documentSecret])])
        // AWS's shape: `cpix:Key` holds what a `pskc:Secret` would (EncryptedValue, ValueMAC).
        let macMethod = XMLElementValue(
            cpix, "MACMethod", attributes: [XMLAttribute("Algorithm", CPIXNamespace.hmacSHA512)],
            children: [XMLElementValue(cpix, "Key", children: macSecret.children)])
        return XMLElementValue(cpix, "DeliveryData", attributes: recipient.attributes, children: [recipient.deliveryKey, documentKeyElement, macMethod])
    }

    private func wrap(_ secret: [UInt8], for recipient: DeliveryRecipient) throws(SpekeError) -> [UInt8] {
        do {
            return try recipient.publicKey.encryptOAEP(secret, digest: .sha1)
        } catch {
            throw .crypto("RSA-OAEP encryption for a delivery certificate failed")
        }
    }

    /// `pskc:Secret` with `pskc:EncryptedValue` (`enc:EncryptionMethod`, `enc:CipherData/enc:CipherValue`) and `pskc:ValueMAC`.
    private static func secret(_ cipherValue: [UInt8], algorithm: String, mac: [UInt8]) -> XMLElementValue {
        let pskc = CPIXNamespace.pskc
        let enc = CPIXNamespace.xmlenc
        let encrypted = XMLElementValue(
            pskc, "EncryptedValue",
            children: [
                XMLElementValue(enc, "EncryptionMethod", attributes: [XMLAttribute("Algorithm", algorithm)]),
                XMLElementValue(enc, "CipherData", children: [XMLElementValue(enc, "CipherValue", text: Base64.encode(cipherValue))]),
            ])
        return XMLElementValue(pskc, "Secret", children: [encrypted, XMLElementValue(pskc, "ValueMAC", text: Base64.encode(mac))])
    }
}
