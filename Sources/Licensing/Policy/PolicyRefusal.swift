import FairPlay

/// Every reason the policy engine (and the token, device-limit and stream-limit checks) can refuse a
/// license, each with a stable rule name for replies and logs and a status code.
///
/// Statuses reuse Apple's codes where Apple's KSM would answer the same (`clientSecurityLevelErr`
/// -42604, `paramErr` -42585) and the project's existing `tooManyStreams` (-43004); the rest are
/// proposed project codes in -43011...-43030 (docs/policy.md, docs/status-codes.md). Licensing
/// cannot see `KSMStatus`, so the code travels as a raw `Int32` with its name.
package enum PolicyRefusal: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    // Client security (Apple's clientSecurityLevelErr).
    case securityLevelBelowMinimum = "security-level:below-minimum"
    case securityLevelKDL = "security-level:kdl-below-minimum"
    case hdcpType1NeedsCapability = "hdcp:type1-needs-capability"
    case airPlayCapped = "airplay:capped"
    case avAdapterCapped = "av-adapter:capped"
    case virtualMachineCapped = "vm:capped"
    // Where it plays.
    case airPlayDenied = "airplay:denied"
    case avAdapterDenied = "av-adapter:denied"
    case virtualMachineDenied = "vm:denied"
    // Time.
    case rentalNotYetValid = "rental:not-yet-valid"
    case rentalExpired = "rental:expired"
    case rentalPeriodOver = "rental:period-over"
    // Downloads.
    case offlineNotAllowed = "offline:not-allowed"
    /// Retired: never returned. SDK 26 refuses no client an offline request (one without capability
    /// bit 3 gets a persistable content key duration, ``OfflineDelivery``); the case keeps its code
    /// -43018 from meaning anything else to a platform that still maps it.
    case offlineNeedsCapability = "offline:needs-capability"
    // Leases and playback states (Apple's paramErr where the request itself cannot be answered).
    /// The policy sets `lease.requires-playback-state` and the SPC has no media playback state.
    case leaseNeedsPlaybackState = "lease:needs-playback-state"
    /// A check-in job whose SPC has no sync TLLV with flags (none, or sync v1), as SDK 26 refuses it.
    case checkInNeedsSync = "sync:check-in-needs-sync-v2"
    case leaseRenewalNotAllowed = "lease:renewal-not-allowed"
    case tooManyStreams = "lease:too-many-streams"
    case streamEnded = "lease:ended-by-newer-stream"
    case deviceLimitReached = "device-limit:reached"
    // Entitlement tokens.
    case tokenMissing = "token:missing"
    case tokenMalformed = "token:malformed"
    case tokenUnsupportedAlgorithm = "token:unsupported-alg"
    case tokenUnknownKeyID = "token:unknown-kid"
    case tokenBadSignature = "token:bad-signature"
    case tokenExpired = "token:expired"
    case tokenNotYetValid = "token:not-yet-valid"
    case tokenWrongAccount = "token:wrong-account"
    case tokenWrongAsset = "token:wrong-asset"
    case tokenWrongTenant = "token:wrong-tenant"
    /// A v2 sync SPC whose server challenge is not the one the platform issued (the job's `server-challenge`).
    case syncChallengeMismatch = "sync:challenge-mismatch"

    /// The stable rule name carried in the reply's `rule` field.
    package var rule: String { rawValue }

    /// The reply status code.
    package var status: Int32 {
        switch self {
        case .securityLevelBelowMinimum, .securityLevelKDL, .hdcpType1NeedsCapability, .airPlayCapped, .avAdapterCapped,
            .virtualMachineCapped:
            FairPlayStatus.clientSecurityLevel.rawValue
        case .leaseNeedsPlaybackState, .checkInNeedsSync: FairPlayStatus.parameterError.rawValue
        case .tooManyStreams: -43004
        case .airPlayDenied: -43011
        case .avAdapterDenied: -43012
        case .virtualMachineDenied: -43013
        case .rentalNotYetValid: -43014
        case .rentalExpired: -43015
        case .rentalPeriodOver: -43016
        case .offlineNotAllowed: -43017
        case .offlineNeedsCapability: -43018
        case .leaseRenewalNotAllowed: -43019
        case .deviceLimitReached: -43020
        case .streamEnded: -43021
        case .tokenMissing: -43022
        case .tokenMalformed, .tokenUnsupportedAlgorithm: -43023
        case .tokenUnknownKeyID: -43024
        case .tokenBadSignature: -43025
        case .tokenExpired: -43026
        case .tokenNotYetValid: -43027
        case .tokenWrongAccount: -43028
        case .tokenWrongAsset: -43029
        case .tokenWrongTenant: -43030
        case .syncChallengeMismatch: -43034
        }
    }

    /// The status name: Apple's spelling for Apple's codes, lowerCamelCase for the project's.
    package var statusName: String {
        switch status {
        case FairPlayStatus.clientSecurityLevel.rawValue: "clientSecurityLevelErr"
        case FairPlayStatus.parameterError.rawValue: "paramErr"
        case -43004: "tooManyStreams"
        case -43011: "airPlayDenied"
        case -43012: "avAdapterDenied"
        case -43013: "virtualMachineDenied"
        case -43014: "rentalNotYetValid"
        case -43015: "rentalExpired"
        case -43016: "rentalPeriodOver"
        case -43017: "offlineNotAllowed"
        case -43018: "offlineNeedsCapability"
        case -43019: "leaseRenewalNotAllowed"
        case -43020: "deviceLimitReached"
        case -43021: "streamEnded"
        case -43022: "tokenMissing"
        case -43023: "tokenMalformed"
        case -43024: "tokenUnknownKeyID"
        case -43025: "tokenBadSignature"
        case -43026: "tokenExpired"
        case -43027: "tokenNotYetValid"
        case -43028: "tokenWrongAccount"
        case -43029: "tokenWrongAsset"
        case -43030: "tokenWrongTenant"
        case -43034: "syncChallengeMismatch"
        default: "unknown"
        }
    }

    package var description: String { "\(rule) (\(statusName) \(status))" }
}
