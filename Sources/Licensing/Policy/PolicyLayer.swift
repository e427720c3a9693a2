/// Where a field of an ``EffectivePolicy`` came from, lowest precedence first.
package enum PolicyLayer: String, Hashable, Sendable, CaseIterable, Comparable {
    /// Apple's SDK 26 rules for the content type, and the engine's documented defaults.
    case appleDefault = "apple-default"
    /// The tenant's default document.
    case tenant
    /// The asset's override document.
    case asset
    /// The key period's override document (live streams that rotate keys).
    case keyPeriod = "key-period"
    /// The `policy` claim of a verified entitlement token.
    case entitlement

    var rank: Int {
        switch self {
        case .appleDefault: 0
        case .tenant: 1
        case .asset: 2
        case .keyPeriod: 3
        case .entitlement: 4
        }
    }

    package static func < (lhs: PolicyLayer, rhs: PolicyLayer) -> Bool { lhs.rank < rhs.rank }
}
