/// One `cpix:ContentKey` of a request: the key the encryptor asks for.
package struct RequestedContentKey: Sendable, Hashable {
    package var kid: KID
    /// `ContentKey@kid` exactly as the request wrote it (the answer repeats it, and error messages name it).
    package var kidText: String
    /// `ContentKey@commonEncryptionScheme` (`cbcs` for FairPlay).
    package var commonEncryptionScheme: String
    /// The 16-byte IV of `ContentKey@explicitIV` when the request carried one. The packager encrypts
    /// with it, so the key issued for this KID must use it as its IV (the IV of the CKC).
    package var explicitIV: [UInt8]?
    /// `ContentKey@explicitIV` as written, answered unchanged (AWS's own examples carry IVs whose
    /// last base64 symbol has non-zero padding bits; rewriting them would change the attribute).
    package var explicitIVText: String?
    /// The request's other attributes (`id`, `Algorithm`, ...), answered unchanged.
    package var otherAttributes: [XMLAttribute]

    package init(
        kid: KID, kidText: String, commonEncryptionScheme: String, explicitIV: [UInt8]? = nil, explicitIVText: String? = nil,
        otherAttributes: [XMLAttribute] = []
    ) {
        self.kid = kid
        self.kidText = kidText
        self.commonEncryptionScheme = commonEncryptionScheme
        self.explicitIV = explicitIV
        self.explicitIVText = explicitIVText
        self.otherAttributes = otherAttributes
    }
}
