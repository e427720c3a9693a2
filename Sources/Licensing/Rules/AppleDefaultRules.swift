import FairPlay

/// Apple's SDK 26 business rules (`extension/business_rules.rs`, `checkBusinessRules`), in its order:
///
/// 1. a Kext Deny List version above 0 and below 31: clientSecurityLevelErr, whatever the content;
/// 2. a lease together with an offline key: paramErr;
/// 3. a check-in whose SPC has no sync flags (none, or a sync v1 TLLV): paramErr;
/// 4. per content type: `uhd` requires Main (a report below Main, or Baseline-only capability bits,
///    is clientSecurityLevelErr) and HDCP type 1 (anything else is paramErr); `hd` requires Baseline
///    and HDCP (none is paramErr); `sd` requires Baseline; `audio` the Audio level; no type is paramErr;
/// 5. HDCP type 1 to a client without capability bit 0: clientSecurityLevelErr.
package enum AppleDefaultRules {
    /// What one `create-ckc` operation asks for, as far as the rules look at it.
    package struct Request: Hashable, Sendable {
        package var contentType: ContentType?
        package var hdcp: HDCPRequirement
        package var lease: Bool
        package var offline: Bool
        package var checkIn: Bool

        package init(contentType: ContentType?, hdcp: HDCPRequirement = .type0, lease: Bool = false, offline: Bool = false, checkIn: Bool = false) {
            self.contentType = contentType
            self.hdcp = hdcp
            self.lease = lease
            self.offline = offline
            self.checkIn = checkIn
        }
    }

    /// Applies the rules; returns the security level the CKC requires.
    package static func check(_ request: Request, payload: SPCPayload) throws(FairPlayError) -> SecurityLevel {
        let client = ClientSecurity(payload)
        if client.kdlBelow(ClientSecurity.minimumKDLVersion) {
            throw FairPlayError(
                .clientSecurityLevel, "Kext Deny List version \(client.kdlVersion ?? 0) is below the minimum \(ClientSecurity.minimumKDLVersion)")
        }
        if request.lease && request.offline {
            throw FairPlayError(.parameterError, "a lease is not supported for offline HLS")
        }
        if request.checkIn && (payload.sync?.flags ?? []).isEmpty {
            throw FairPlayError(.parameterError, "check-in requested but the SPC has no sync TLLV with flags (sync v2)")
        }
        guard let type = request.contentType else {
            throw FairPlayError(.parameterError, "no content type given (sd, hd, uhd or audio)")
        }
        let level = requiredLevel(for: type)
        if !client.meets(level) {
            throw FairPlayError(
                .clientSecurityLevel, "\(type.rawValue) content requires security level \(level); the client has \(client.level) (\(client.source))")
        }
        switch type {
        case .uhd where request.hdcp != .type1:
            throw FairPlayError(.parameterError, "uhd content requires HDCP type 1")
        case .hd where request.hdcp == .notRequired:
            throw FairPlayError(.parameterError, "hd content requires HDCP")
        default:
            break
        }
        if request.hdcp == .type1, payload.capabilities?.hdcpEnforcement != true {
            throw FairPlayError(.clientSecurityLevel, "HDCP type 1 enforcement requested but the client does not support it (capability bit 0)")
        }
        return level
    }

    /// The level the CKC's required security level TLLV names for a content type.
    package static func requiredLevel(for type: ContentType) -> SecurityLevel {
        switch type {
        case .uhd: .main
        case .hd, .sd: .baseline
        case .audio: .audio
        }
    }

    /// The HDCP level a policy asks for by default: the least each content type accepts.
    package static func defaultHDCP(for type: ContentType) -> HDCPRequirement {
        type == .uhd ? .type1 : .type0
    }
}
