import FairPlay
import Licensing

/// A job the policy issues, with its content key: what the lease and CKC stages need.
struct IssuedJob: Sendable {
    let index: Int
    let request: SPCRequest
    let evaluation: LicenseEvaluation
    /// The decision's terms (``LicenseEvaluation/decision`` issues).
    let terms: LicenseTerms
    /// The unwrapped or derived key; nil when the terms send none (playback state 2, sync check-in).
    let key: SecretBytes?
    let iv: [UInt8]
}
