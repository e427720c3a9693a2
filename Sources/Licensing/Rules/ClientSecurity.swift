import FairPlay

/// The security level a client can be trusted with, read from its SPC the way Apple's SDK 26 does.
public struct ClientSecurity: Hashable, Sendable {
    /// The level the client may receive content for.
    public var level: SecurityLevel
    /// The Kext Deny List version that counted (macOS only), if reported.
    public var kdlVersion: UInt32?
    /// True when a reported KDL below the minimum capped the level at Baseline.
    public var cappedByKDL: Bool
    /// Where the level came from: "security-level-report", "capabilities" or "default".
    public var source: String

    /// The latest Kext Deny List version published by Apple (September 2024).
    public static let minimumKDLVersion: UInt32 = 31

    /// Reads the client's level: the security level report first, then the capability bits, else Baseline
    /// (every FairPlay client is at least Baseline). A KDL below `minimumKDL` makes the client Baseline at best.
    public init(_ payload: SPCPayload, minimumKDL: UInt32 = ClientSecurity.minimumKDLVersion) {
        if let report = payload.securityLevelReport, report.level.rank > 0 {
            level = report.level
            source = "security-level-report"
        } else if let caps = payload.capabilities, caps.securityLevelMain {
            level = .main
            source = "capabilities"
        } else {
            level = .baseline
            source = payload.capabilities?.securityLevelBaseline == true ? "capabilities" : "default"
        }
        kdlVersion = payload.effectiveKDLVersion
        cappedByKDL = false
        if let kdl = kdlVersion, kdl > 0, kdl < minimumKDL, level > SecurityLevel.baseline {
            level = .baseline
            cappedByKDL = true
        }
    }
}
