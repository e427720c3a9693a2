/// One Application Certificate with what opens its SPCs: the RSA private keys and the session key source.
///
/// A certificate may carry a 1024-bit key (SPC v1) and a 2048-bit key (SPC v2); Apple's
/// `certificates.json` names both per certificate.
public struct ApplicationCredential: Sendable {
    /// A label for logs and reports (never key material).
    public let name: String
    /// The Application Certificate as DER bytes, exactly as Apple issued it (its hashes name it in SPCs).
    public let certificateDER: [UInt8]
    /// SHA-1 of `certificateDER`: the value SPCs carry at bytes 152-171 (v1).
    public let certificateHash: [UInt8]
    /// SHA-256 of `certificateDER`: the value SPC version 3 carries in place of the SHA-1. Computed once here.
    public let certificateSHA256: [UInt8]
    package let privateKey1024: RSAPrivateKey?
    package let privateKey2048: RSAPrivateKey?
    package let sessionKeySource: SessionKeySource

    package init(name: String, certificateDER: [UInt8], privateKey1024: RSAPrivateKey?, privateKey2048: RSAPrivateKey?, sessionKeySource: SessionKeySource)
        throws(FairPlayError)
    {
        guard privateKey1024 != nil || privateKey2048 != nil else {
            throw FairPlayError(.invalidCertificate, "credential \(name) has no private key")
        }
        if let k = privateKey1024, k.bits != 1024 {
            throw FairPlayError(.invalidCertificate, "credential \(name): the 1024-bit private key has \(k.bits) bits")
        }
        if let k = privateKey2048, k.bits != 2048 {
            throw FairPlayError(.invalidCertificate, "credential \(name): the 2048-bit private key has \(k.bits) bits")
        }
        switch sessionKeySource {
        case .applicationSecretKey(let k) where k.count != 16: throw .param("credential \(name): ASk must be 16 bytes")
        case .fixedDerivedKey(let k) where k.count != 16: throw .param("credential \(name): DASk must be 16 bytes")
        default: break
        }
        self.name = name
        self.certificateDER = certificateDER
        self.certificateHash = FairPlayCrypto.sha1(certificateDER)
        self.certificateSHA256 = FairPlayCrypto.sha256(certificateDER)
        self.privateKey1024 = privateKey1024
        self.privateKey2048 = privateKey2048
        self.sessionKeySource = sessionKeySource
    }

    /// The private key for an SPC container version (1: 1024-bit; 2 and 3: 2048-bit); nil if this credential lacks it.
    package func privateKey(forSPCVersion version: UInt32) -> RSAPrivateKey? {
        version == 1 ? privateKey1024 : privateKey2048
    }
}
