import FairPlay

/// The security level a client is trusted with, read the way Apple's SDK 26 business rules read it.
///
/// A plaintext security level report decides; without one, a client that announces Baseline
/// (capability bit 4) but not Main (bit 5) is Baseline, and any other client is trusted with every
/// level: SDK 26 lets older devices, which send no security fields, play even UHD on purpose.
/// Levels compare by their raw values, as SDK 26 compares them.
package struct ClientSecurity: Hashable, Sendable {
    /// The level the client may receive content for.
    package var level: SecurityLevel
    /// The Kext Deny List version that counted (macOS only), if reported.
    package var kdlVersion: UInt32?
    /// Where the level came from: "security-level-report", "capabilities" or "unreported".
    package var source: String

    /// The lowest Kext Deny List version SDK 26 accepts (`MIN_KDL_VERSION`); below it, it refuses the client.
    package static let minimumKDLVersion: UInt32 = 31

    package init(reportedLevel: SecurityLevel?, capabilities: Capabilities?, kdlVersion: UInt32?) {
        if let reportedLevel {
            level = reportedLevel
            source = "security-level-report"
        } else if let capabilities, capabilities.securityLevelBaseline, !capabilities.securityLevelMain {
            level = .baseline
            source = "capabilities"
        } else {
            level = .main
            source = capabilities?.securityLevelMain == true ? "capabilities" : "unreported"
        }
        self.kdlVersion = kdlVersion == 0 ? nil : kdlVersion
    }

    package init(_ payload: SPCPayload) {
        self.init(reportedLevel: payload.securityLevelReport?.level, capabilities: payload.capabilities, kdlVersion: payload.effectiveKDLVersion)
    }

    /// True when the client meets `required`: audio always, otherwise its level is at least `required`.
    package func meets(_ required: SecurityLevel) -> Bool {
        level.satisfies(required)
    }

    /// True when a reported Kext Deny List version lies below `minimum` (SDK 26 refuses such a client).
    package func kdlBelow(_ minimum: UInt32) -> Bool {
        guard let kdlVersion else { return false }
        return kdlVersion < minimum
    }
}
