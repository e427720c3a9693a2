import FairPlay

/// What the SPC says about the client, reduced to what policy needs. Built from an ``SPCPayload``
/// by ``init(_:)``, or field by field in tests.
package struct ClientFacts: Hashable, Sendable {
    /// The level of the security level report TLLV, if the client sent one.
    package var reportedLevel: SecurityLevel?
    /// The Kext Deny List version that counts: the KDL TLLV's, else the security level report's.
    package var kdlVersion: UInt32?
    package var capabilities: Capabilities?
    /// True when the SPC has a device info or device identity TLLV (older clients without a report).
    package var hasDeviceInfo: Bool
    /// Nil when the SPC has no streaming indicator TLLV (the device itself plays).
    package var streamingIndicator: StreamingIndicator?
    /// True when a VM device info TLLV with a version other than 0 is present.
    package var isVirtualMachine: Bool
    /// The media playback state TLLV, if any.
    package var playback: MediaPlaybackInfo?
    /// A valid sync TLLV (version 1 or 2), if any: the SPC is a sync SPC.
    package var sync: SyncRequest?

    package init(
        reportedLevel: SecurityLevel? = nil,
        kdlVersion: UInt32? = nil,
        capabilities: Capabilities? = nil,
        hasDeviceInfo: Bool = false,
        streamingIndicator: StreamingIndicator? = nil,
        isVirtualMachine: Bool = false,
        playback: MediaPlaybackInfo? = nil,
        sync: SyncRequest? = nil
    ) {
        self.reportedLevel = reportedLevel
        self.kdlVersion = kdlVersion
        self.capabilities = capabilities
        self.hasDeviceInfo = hasDeviceInfo
        self.streamingIndicator = streamingIndicator
        self.isVirtualMachine = isVirtualMachine
        self.playback = playback
        self.sync = sync
    }

    /// Reads the facts from a decrypted SPC payload.
    package init(_ payload: SPCPayload) {
        self.init(
            reportedLevel: payload.securityLevelReport?.level,
            kdlVersion: payload.effectiveKDLVersion,
            capabilities: payload.capabilities,
            hasDeviceInfo: payload.deviceInfo != nil || payload.deviceIdentity != nil,
            streamingIndicator: payload.streamingIndicator,
            isVirtualMachine: payload.vmDeviceInfo?.isVirtualMachine ?? false,
            playback: payload.playback,
            sync: payload.sync
        )
    }

    /// The level the client is trusted with before any policy cap, read as Apple's SDK 26 reads it
    /// (``ClientSecurity``): the security level report, else Baseline for a client whose capability
    /// bits say Baseline and not Main, else every level (older clients send no security fields).
    /// `kdlBelowMinimum` is true when a reported Kext Deny List version lies below `minimumKDL`.
    package func derivedSecurity(minimumKDL: UInt32) -> DerivedSecurity {
        let security = ClientSecurity(reportedLevel: reportedLevel, capabilities: capabilities, kdlVersion: kdlVersion)
        return DerivedSecurity(level: security.level, source: security.source, kdlBelowMinimum: security.kdlBelow(minimumKDL))
    }

    /// The outcome of ``derivedSecurity(minimumKDL:)``.
    package struct DerivedSecurity: Hashable, Sendable {
        package var level: SecurityLevel
        /// "security-level-report", "capabilities" or "unreported".
        package var source: String
        /// True when a reported Kext Deny List version is below the minimum (refused, as by SDK 26).
        package var kdlBelowMinimum: Bool
    }
}
