import Wire

/// The credentials one server holds, found by certificate hash (fps-facts.md: several at once).
public struct CredentialStore: Sendable {
    private let byHash: [[UInt8]: ApplicationCredential]
    /// The same credentials by SHA-256 of the certificate, for SPC version 3.
    private let bySHA256: [[UInt8]: ApplicationCredential]

    /// Indexes credentials by certificate hash.
    /// - Throws: `invalidCertificate` when two credentials hold the same certificate.
    public init(_ credentials: [ApplicationCredential]) throws(FairPlayError) {
        var map: [[UInt8]: ApplicationCredential] = [:]
        for c in credentials {
            guard map[c.certificateHash] == nil else {
                throw FairPlayError(.invalidCertificate, "two credentials share certificate hash \(c.certificateHash.hexString)")
            }
            map[c.certificateHash] = c
        }
        byHash = map
        // Distinct SHA-1s mean distinct certificates, so their SHA-256s differ too: no second duplicate check.
        bySHA256 = Dictionary(map.values.map { ($0.certificateSHA256, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Every credential held, in no particular order.
    public var all: [ApplicationCredential] { Array(byHash.values) }

    /// The credential for a certificate hash; nil when this server does not hold that certificate.
    public func credential(forCertificateHash hash: some Collection<UInt8>) -> ApplicationCredential? {
        byHash[Array(hash)]
    }

    /// The credential whose certificate has this SHA-256 (SPC version 3); nil when this server does not hold it.
    public func credential(forCertificateSHA256 hash: some Collection<UInt8>) -> ApplicationCredential? {
        bySHA256[Array(hash)]
    }
}
