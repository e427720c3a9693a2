import FairPlay

/// Apple's SDK 26 business rules per content type: the default policy (fps-facts.md).
///
/// - `uhd`: security level Main and HDCP type 1 (released only to clients with HDCP enforcement).
/// - `hd`: Baseline and HDCP type 0 or 1 (a request for none is raised to type 0).
/// - `sd`: Baseline. `audio`: the Audio level.
/// - A lease together with an offline key is a parameter error.
public enum AppleDefaultRules {
    /// What the CKC must require of the client.
    public struct Requirement: Hashable, Sendable {
        public var securityLevel: SecurityLevel
        public var hdcp: HDCPRequirement
    }

    /// The requirement for a content type, given the HDCP level the content owner asked for.
    public static func requirement(for type: ContentType, requestedHDCP: HDCPRequirement) -> Requirement {
        switch type {
        case .uhd: Requirement(securityLevel: .main, hdcp: .type1)
        case .hd: Requirement(securityLevel: .baseline, hdcp: requestedHDCP == .type1 ? .type1 : .type0)
        case .sd: Requirement(securityLevel: .baseline, hdcp: requestedHDCP)
        case .audio: Requirement(securityLevel: .audio, hdcp: requestedHDCP)
        }
    }

    /// Checks a client against a requirement.
    /// - Throws: `clientSecurityLevel` when the client is below the level, or cannot enforce HDCP type 1.
    public static func check(_ client: ClientSecurity, capabilities: Capabilities?, against requirement: Requirement) throws(FairPlayError) {
        if requirement.securityLevel != .audio, client.level < requirement.securityLevel {
            let why = client.cappedByKDL ? " (Kext Deny List \(client.kdlVersion ?? 0) is below \(ClientSecurity.minimumKDLVersion))" : ""
            throw FairPlayError(.clientSecurityLevel, "client security level \(client.level) is below the required \(requirement.securityLevel)\(why)")
        }
        if requirement.hdcp == .type1, capabilities?.hdcpEnforcement != true {
            throw FairPlayError(.clientSecurityLevel, "HDCP type 1 is required but the client does not enforce HDCP (capability bit 0)")
        }
    }
}
