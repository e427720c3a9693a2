/// The DRM system identifiers (DASH-IF registry) a SPEKE request may name in `DRMSystem@systemId`.
package enum DRMSystemID {
    /// Apple FairPlay Streaming: the only system this key provider serves.
    package static let fairPlay = KID(constant: [0x94, 0xCE, 0x86, 0xFB, 0x07, 0xFF, 0x4F, 0x43, 0xAD, 0xB8, 0x93, 0xD2, 0xFA, 0x96, 0x8C, 0xA2])

    /// The `commonEncryptionScheme` values FairPlay content may use: `cbcs` (MediaPackage's system
    /// ID table: FairPlay "cbcs only"; AWS's verification suite rejects FairPlay with `cenc`) and,
    /// under SPEKE v2.1 where CPIX 2.4 allows HLS method names, `SAMPLE-AES` (FairPlay's HLS method
    /// for transport streams).
    package static func fairPlaySchemes(_ version: SpekeVersion) -> Set<String> {
        switch version {
        case .v2_0: ["cbcs"]
        case .v2_1: ["cbcs", "SAMPLE-AES"]
        }
    }
}
