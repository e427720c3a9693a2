import FairPlay

/// What the SPC says about the client, reduced to what policy needs. Built from an ``SPCPayload``
/// by ``init(_:)``, or field by field in tests.
public struct ClientFacts: Hashable, Sendable {
    /// The level of the security level report TLLV, if the client sent one.
    public var reportedLevel: SecurityLevel?
    /// The Kext Deny List version that counts: the KDL TLLV's, else the security level report's.
    public var kdlVersion: UInt32?
    public var capabilities: Capabilities?
    /// True when the SPC has a device info or device identity TLLV (older clients without a report).
    public var hasDeviceInfo: Bool
    /// Nil when the SPC has no streaming indicator TLLV (the device itself plays).
    public var streamingIndicator: StreamingIndicator?
    /// True when a VM device info TLLV with a version other than 0 is present.
    public var isVirtualMachine: Bool
    /// The media playback state TLLV, if any.
    public var playback: MediaPlaybackInfo?
    /// A valid sync TLLV (version 1 or 2), if any: the SPC is a sync SPC.
    public var sync: SyncRequest?

    public init(
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
    public init(_ payload: SPCPayload) {
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

    /// The level the client is trusted with before any policy cap, read the way Apple's SDK 26 does:
    /// the security level report, else the capability bits (5 Main, 4 Baseline), else Baseline
    /// (every FairPlay client is at least Baseline; older clients only send device info). A KDL
    /// version below `minimumKDL` makes the client Baseline at best (guide, "Kext Deny List").
    public func derivedSecurity(minimumKDL: UInt32) -> DerivedSecurity {
        var level = SecurityLevel.baseline
        var source = hasDeviceInfo ? "device-info" : "default"
        if let reportedLevel, reportedLevel.rank > 0 {
            level = reportedLevel
            source = "security-level-report"
        } else if let capabilities, capabilities.securityLevelMain {
            level = .main
            source = "capabilities"
        } else if let capabilities, capabilities.securityLevelBaseline {
            source = "capabilities"
        }
        var cappedByKDL = false
        if let kdl = kdlVersion, kdl > 0, (kdl < minimumKDL), level > SecurityLevel.baseline {
            level = .baseline
            cappedByKDL = true
        }
        return DerivedSecurity(level: level, source: source, cappedByKDL: cappedByKDL)
    }

    /// The outcome of ``derivedSecurity(minimumKDL:)``.
    public struct DerivedSecurity: Hashable, Sendable {
        public var level: SecurityLevel
        /// "security-level-report", "capabilities", "device-info" or "default".
        public var source: String
        /// True when the KDL rule lowered the level.
        public var cappedByKDL: Bool
    }
}
