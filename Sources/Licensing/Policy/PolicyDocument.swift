import FairPlay
import Wire

/// One stored policy document: a tenant's defaults, an asset's or key period's overrides, or the
/// `policy` claim of an entitlement token (schemas/policy.schema.json).
///
/// Every field is optional so that a document can be a layer: nil means "this layer says nothing,
/// keep what the layer below decided". ``PolicyResolver`` stacks layers over Apple's default rules
/// into an ``EffectivePolicy`` with no optionals.
///
/// Read with ``init(json:)`` / ``init(value:)`` (the strict ``JSONParser``), written with
/// ``jsonValue`` / ``jsonBytes()`` (``JSONWriter``). Unknown fields are ignored, so a newer policy
/// writer does not break older workers.
package struct PolicyDocument: Hashable, Sendable {
    /// Selects Apple's default rules (the base of the security level and HDCP).
    package var contentType: ContentType?
    /// The lowest security level the client must have; overrides Apple's default for the content type.
    package var minimumSecurityLevel: SecurityLevel?
    /// A Kext Deny List version below this makes a macOS client Baseline at best. Default: 31.
    package var minimumKDLVersion: UInt32?
    /// The HDCP level the CKC requires; overrides Apple's default for the content type.
    package var hdcp: HDCPRequirement?
    /// Playback through AirPlay (streaming indicator). Default: allow.
    package var airPlay: ClientRestriction?
    /// Playback through Apple's digital AV adapter (streaming indicator). Default: allow.
    package var avAdapter: ClientRestriction?
    /// A client inside a virtual machine (VM device info TLLV). Default: allow.
    package var virtualMachine: ClientRestriction?
    /// The rental window and duration.
    package var rental: Rental
    /// The secure lease.
    package var lease: Lease
    /// Persistable keys for downloads. Default: none.
    package var persistence: PersistencePolicy?
    /// Offline rental with dual expiry (offline key TLLV).
    package var offline: Offline
    /// Devices (HUs) one account may register. Default: unlimited.
    package var deviceLimit: PolicyLimit?
    /// Concurrent streams (lease slots) one account may hold. Default: unlimited.
    package var maxStreams: PolicyLimit?
    /// What happens when the account is at `maxStreams`. Default: refuse-new.
    package var whenFull: WhenFull?
    /// Whether a job must carry a verified entitlement token. Default: false.
    package var entitlementRequired: Bool?

    package init(
        contentType: ContentType? = nil,
        minimumSecurityLevel: SecurityLevel? = nil,
        minimumKDLVersion: UInt32? = nil,
        hdcp: HDCPRequirement? = nil,
        airPlay: ClientRestriction? = nil,
        avAdapter: ClientRestriction? = nil,
        virtualMachine: ClientRestriction? = nil,
        rental: Rental = Rental(),
        lease: Lease = Lease(),
        persistence: PersistencePolicy? = nil,
        offline: Offline = Offline(),
        deviceLimit: PolicyLimit? = nil,
        maxStreams: PolicyLimit? = nil,
        whenFull: WhenFull? = nil,
        entitlementRequired: Bool? = nil
    ) {
        self.contentType = contentType
        self.minimumSecurityLevel = minimumSecurityLevel
        self.minimumKDLVersion = minimumKDLVersion
        self.hdcp = hdcp
        self.airPlay = airPlay
        self.avAdapter = avAdapter
        self.virtualMachine = virtualMachine
        self.rental = rental
        self.lease = lease
        self.persistence = persistence
        self.offline = offline
        self.deviceLimit = deviceLimit
        self.maxStreams = maxStreams
        self.whenFull = whenFull
        self.entitlementRequired = entitlementRequired
    }

    /// The rental window (absolute, epoch milliseconds) and the rental duration (relative to the
    /// account's first license for the asset). JSON: `{"not-before", "not-after", "duration"}`.
    package struct Rental: Hashable, Sendable {
        /// No license before this instant (epoch ms).
        package var notBefore: Int64?
        /// No license from this instant on (epoch ms); also bounds the key's rental duration.
        package var notAfter: Int64?
        /// Seconds the rental lasts from the first license; 0 means no rental duration.
        package var durationSeconds: UInt32?

        package init(notBefore: Int64? = nil, notAfter: Int64? = nil, durationSeconds: UInt32? = nil) {
            self.notBefore = notBefore
            self.notAfter = notAfter
            self.durationSeconds = durationSeconds
        }

        /// True when no field is set.
        package var isEmpty: Bool { notBefore == nil && notAfter == nil && durationSeconds == nil }
    }

    /// The secure lease (guide, "Secure Lease"). JSON: `{"duration", "renewal", "requires-playback-state"}`.
    package struct Lease: Hashable, Sendable {
        /// Seconds a granted or renewed lease lasts; 0 means no lease.
        package var durationSeconds: UInt32?
        /// Whether playback state 3 (lease about to expire) may renew. Default: true.
        package var renewalAllowed: Bool?
        /// Whether an SPC without a media playback state is refused under a lease. Default: false, as
        /// Apple's SDK 26, which issues such a client its key without a duration TLLV (and no slot).
        package var requiresPlaybackState: Bool?

        package init(durationSeconds: UInt32? = nil, renewalAllowed: Bool? = nil, requiresPlaybackState: Bool? = nil) {
            self.durationSeconds = durationSeconds
            self.renewalAllowed = renewalAllowed
            self.requiresPlaybackState = requiresPlaybackState
        }

        package var isEmpty: Bool { durationSeconds == nil && renewalAllowed == nil && requiresPlaybackState == nil }
    }

    /// Offline rental with dual expiry (guide, "Offline Rental Support").
    /// JSON: `{"enabled", "storage-duration", "playback-duration"}`.
    package struct Offline: Hashable, Sendable {
        /// Whether a download gets the offline terms (an offline key TLLV for capability bit 3, else a
        /// persistable content key duration: ``OfflineDelivery``). Default: false.
        package var enabled: Bool?
        /// Seconds the key stays valid before playback starts, from acquisition; 0 means no limit.
        package var storageSeconds: UInt32?
        /// Seconds the key stays valid after the first playback; 0 means no limit.
        package var playbackSeconds: UInt32?

        package init(enabled: Bool? = nil, storageSeconds: UInt32? = nil, playbackSeconds: UInt32? = nil) {
            self.enabled = enabled
            self.storageSeconds = storageSeconds
            self.playbackSeconds = playbackSeconds
        }

        package var isEmpty: Bool { enabled == nil && storageSeconds == nil && playbackSeconds == nil }
    }
}
