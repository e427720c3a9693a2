import FairPlay

/// What a simulated device knows of a server: the Application Certificate, its public keys, and the ASk
/// the device's D function shares with the server (legacy credentials).
public struct DeviceTrust: Sendable {
    /// SHA-1 of the certificate: what SPC versions 1 and 2 name it by.
    public let certificateHash: [UInt8]
    /// SHA-256 of the certificate: what SPC version 3 names it by.
    public let certificateSHA256: [UInt8]
    package let publicKey1024: RSAPublicKey?
    package let publicKey2048: RSAPublicKey?
    /// The 16-byte Application Secret Key the device's D function shares with the server.
    public let ask: [UInt8]

    /// - Parameters:
    ///   - certificateDER: the Application Certificate; its key is taken as the 1024-bit key when it has 1024 bits.
    ///   - publicKey2048: the SPC v2 key, when the certificate's own key is not 2048-bit.
    package init(certificateDER: [UInt8], publicKey2048: RSAPublicKey? = nil, ask: [UInt8]) throws(FairPlayError) {
        let certKey = try RSAPublicKey(certificateDER: certificateDER)
        self.certificateHash = FairPlayCrypto.sha1(certificateDER)
        self.certificateSHA256 = FairPlayCrypto.sha256(certificateDER)
        self.publicKey1024 = certKey.bits == 1024 ? certKey : nil
        self.publicKey2048 = publicKey2048 ?? (certKey.bits == 2048 ? certKey : nil)
        guard ask.count == 16 else { throw FairPlayError(.parameterError, "ASk must be 16 bytes") }
        self.ask = ask
    }
}
