import FairPlay
import Licensing

/// What a pool thread needs to build one CKC.
struct CKCJob: Sendable {
    let request: SPCRequest
    /// Nil when the terms send no content key (playback state 2, sync check-in).
    let key: SecretBytes?
    let iv: [UInt8]
    let duration: ContentKeyDuration?
    let offlineKey: OfflineKey?
    let hdcp: HDCPRequirement
    let securityLevel: SecurityLevel
    let audio: Bool
}
