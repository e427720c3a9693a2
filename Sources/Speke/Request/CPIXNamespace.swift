/// The namespace URIs of CPIX documents (CPIX 2.3, section "XML Schema"; AWS SPEKE v2 "Standard
/// payload components"). Elements are matched by these URIs, never by prefix.
package enum CPIXNamespace {
    package static let cpix = "urn:dashif:org:cpix"
    package static let pskc = "urn:ietf:params:xml:ns:keyprov:pskc"
    package static let xmlenc = "http://www.w3.org/2001/04/xmlenc#"
    package static let xmldsig = "http://www.w3.org/2000/09/xmldsig#"
    /// SPEKE v1 only (`speke:KeyFormat`, `speke:ProtectionHeader`); deprecated by v2.
    package static let speke = "urn:aws:amazon:com:speke"

    /// The prefix each known namespace gets in a document we write (the ones AWS's examples use).
    package static let preferredPrefixes: [(uri: String, prefix: String)] = [
        (cpix, "cpix"), (pskc, "pskc"), (xmlenc, "enc"), (xmldsig, "ds"), (speke, "speke"),
    ]

    // Algorithm URIs of content key encryption (CPIX 2.3, "Mandatory algorithms").

    /// Content key wrapping: AES-256-CBC with PKCS #7 padding.
    package static let aes256CBC = "http://www.w3.org/2001/04/xmlenc#aes256-cbc"
    /// Document key (and MAC key) wrapping: RSA-OAEP with SHA-1 and MGF1-SHA-1.
    package static let rsaOAEPMGF1P = "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p"
    /// Encrypted key MAC: HMAC-SHA512.
    package static let hmacSHA512 = "http://www.w3.org/2001/04/xmldsig-more#hmac-sha512"
}
