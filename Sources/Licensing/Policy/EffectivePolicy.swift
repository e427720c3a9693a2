import FairPlay

/// A policy with every question answered: the result of stacking ``PolicyDocument`` layers over
/// Apple's default rules (``PolicyLayers/resolve()``). The input of ``PolicyEngine``.
///
/// "No limit" is a value, not nil: `rentalNotBefore == .min`, `rentalNotAfter == .max`, a duration
/// of 0, ``PolicyLimit/unlimited``.
package struct EffectivePolicy: Hashable, Sendable {
    package var contentType: ContentType
    /// The lowest level a client must have (after KDL, AirPlay, AV adapter and VM caps).
    package var minimumSecurityLevel: SecurityLevel
    /// A reported Kext Deny List version below this counts as Baseline. Default: 31.
    package var minimumKDLVersion: UInt32
    /// The HDCP level the CKC requires; type 1 is only released to clients with capability bit 0.
    package var hdcp: HDCPRequirement
    package var airPlay: ClientRestriction
    package var avAdapter: ClientRestriction
    package var virtualMachine: ClientRestriction
    /// No license before this instant (epoch ms); `.min` when unbounded.
    package var rentalNotBefore: Int64
    /// No license from this instant on (epoch ms); `.max` when unbounded.
    package var rentalNotAfter: Int64
    /// Seconds a rental lasts from the account's first license for the asset; 0 for none.
    package var rentalDurationSeconds: UInt32
    /// Seconds a lease lasts; 0 for no lease.
    package var leaseDurationSeconds: UInt32
    /// Whether playback state 3 may renew the lease. Default: true.
    package var leaseRenewalAllowed: Bool
    /// Refuse a lease to an SPC without a media playback state (off: SDK 26 issues the key, no slot).
    package var leaseRequiresPlaybackState: Bool
    package var persistence: PersistencePolicy
    /// Whether downloads get the offline terms (storage and playback durations): the offline key TLLV
    /// (dual expiry) for clients with capability bit 3, a persistable content key duration for others
    /// (``OfflineDelivery``). When set, `persistence` does not apply to downloads. Default: false.
    package var offlineEnabled: Bool
    /// Offline storage duration in seconds; 0 means no limit.
    package var offlineStorageSeconds: UInt32
    /// Offline playback duration in seconds; 0 means no limit.
    package var offlinePlaybackSeconds: UInt32
    package var deviceLimit: PolicyLimit
    package var maxStreams: PolicyLimit
    package var whenFull: WhenFull
    package var entitlementRequired: Bool
    /// Which layer set each field, by its JSON name (`"hdcp"`, `"rental.not-after"`, ...), for
    /// `ksm admin explain`. Fields absent here are the engine's defaults.
    package var origins: [String: PolicyLayer]

    /// The engine's defaults over Apple's rules for `contentType`: HDCP type 0 asked for (raised to
    /// type 1 for uhd), KDL 31, everything allowed, no rental, lease, persistence or limits.
    package init(defaultsFor contentType: ContentType) {
        self.contentType = contentType
        minimumSecurityLevel = AppleDefaultRules.requiredLevel(for: contentType)
        minimumKDLVersion = ClientSecurity.minimumKDLVersion
        hdcp = AppleDefaultRules.defaultHDCP(for: contentType)
        airPlay = .allow
        avAdapter = .allow
        virtualMachine = .allow
        rentalNotBefore = .min
        rentalNotAfter = .max
        rentalDurationSeconds = 0
        leaseDurationSeconds = 0
        leaseRenewalAllowed = true
        leaseRequiresPlaybackState = false
        persistence = .none
        offlineEnabled = false
        offlineStorageSeconds = 0
        offlinePlaybackSeconds = 0
        deviceLimit = .unlimited
        maxStreams = .unlimited
        whenFull = .refuseNew
        entitlementRequired = false
        origins = ["content-type": .appleDefault, "security-level": .appleDefault, "hdcp": .appleDefault]
    }

    /// True when the rental window or duration bounds the key.
    package var hasRentalBound: Bool { rentalNotAfter != .max || rentalDurationSeconds > 0 }
}
