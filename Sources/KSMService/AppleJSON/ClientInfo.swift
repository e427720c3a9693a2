import FairPlay
import Licensing

/// What an SPC says about the client, in the field names and encodings of Apple's server JSON
/// (`get-client-info` and the informational fields of `create-ckc`).
public enum ClientInfo {
    /// The fields Apple's reference KSM reports for an opened SPC.
    public static func fields(_ request: SPCRequest) -> [String: Any] {
        let p = request.payload
        var out: [String: Any] = [:]
        out["asset-id"] = assetIDString(request.assetID)
        out["hu"] = hexUpper(request.hu)
        // SDK 26 reports a playback state always, zeros when the SPC has none.
        let playback = p.playback ?? MediaPlaybackInfo(creationDate: 0, state: PlaybackState(rawValue: 0), sessionID: 0)
        out["playback-state"] = ["creation-date": playback.creationDate, "state": playback.state.rawValue, "session-id": playback.sessionID] as [String: Any]
        out["streaming-indicator"] = p.streamingIndicator?.rawValue ?? 0
        out["transaction-id"] = p.transactionID
        // What the plaintext report says, not a derived level: zeros when there is none (SDK 26).
        let reported = p.securityLevelReport?.level
        switch reported {
        case .main?: out["security-level"] = "main"
        case .baseline?: out["security-level"] = "baseline"
        default: out["security-level"] = hex(reported?.rawValue ?? 0, digits: 16)
        }
        out["kdl-version"] = p.kdlVersion
        let caps = p.capabilities ?? Capabilities(low: 0)
        out["capabilities"] = [
            "hdcp": caps.hdcpEnforcement, "offline-key": caps.offlineKey, "secure-invalidation": caps.secureInvalidation,
            "offline-key-2": caps.offlineKeyV2, "security-level-baseline": caps.securityLevelBaseline, "security-level-main": caps.securityLevelMain,
        ]
        if let d = p.deviceIdentity {
            out["device-identity"] = [
                "fpdi-version": d.version, "device-class": d.deviceClass, "vendor-hash": hex(d.vendorHash, digits: 16),
                "product-hash": hex(d.productHash, digits: 16), "fps-ree-version": hex(UInt64(d.fairPlayVersionREE), digits: 8),
                "fps-tee-version": hex(UInt64(d.fairPlayVersionTEE), digits: 8), "os-version": hex(UInt64(d.osVersion), digits: 8),
            ] as [String: Any]
        }
        if let d = p.deviceInfo {
            out["device-info"] = ["device-type": hex(d.deviceType, digits: 16), "os-version": hex(UInt64(d.osVersion), digits: 8)]
        }
        if let v = p.vmDeviceInfo {
            out["vm-device-info"] = [
                "host-device-class": v.hostDeviceClass, "host-os-version": hex(UInt64(v.hostOSVersion), digits: 8), "host-vm-protocol-version": v.hostVirtualizationProtocol,
                "guest-device-class": v.guestDeviceClass, "guest-os-version": hex(UInt64(v.guestOSVersion), digits: 8), "guest-vm-protocol-version": v.guestVirtualizationProtocol,
            ] as [String: Any]
        }
        if let version = p.syncVersion, version > 0 {
            out["offline-sync"] = offlineSync(version: version, p.sync)
        }
        return out
    }

    /// SDK 26's `offline-sync`: version and duration; from version 2 on the challenge, the flags, the
    /// title ID (only when flagged valid), the records; a version it does not read shows zeros.
    static func offlineSync(version: UInt32, _ sync: SyncRequest?) -> [String: Any] {
        var out: [String: Any] = ["version": version, "duration-to-expiry": sync?.durationToExpiry ?? 0]
        guard version >= 2 else { return out }
        var v2 = SyncV2(serverChallenge: 0, flags: [], titleID: [], durationToExpiry: 0, invalidatedStreamIDs: [])
        if case .v2(let s)? = sync { v2 = s }
        out["server-challenge"] = v2.serverChallenge
        out["flags"] = [
            "report": v2.flags.contains(.report), "secure-invalidation": v2.flags.contains(.secureInvalidation),
            "secure-invalidation-all": v2.flags.contains(.secureInvalidationAll), "title-id-valid": v2.flags.contains(.titleIDValid),
            "success": v2.flags.contains(.success), "obj-not-found": v2.flags.contains(.objectNotFound), "obj-expired": v2.flags.contains(.objectExpired),
        ]
        out["title-id"] = v2.flags.contains(.titleIDValid) ? hexUpper(v2.titleID) : ""
        out["records-invalidated"] = v2.invalidatedStreamIDs.count
        out["invalidated-stream-ids"] = v2.invalidatedStreamIDs.map(hexUpper)
        return out
    }

    /// Asset IDs are usually text (`skd://...`); bytes that are not UTF-8 are shown as hex.
    public static func assetIDString(_ bytes: some Collection<UInt8>) -> String {
        let array = Array(bytes)
        if let s = String(validating: array, as: UTF8.self), s.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) { return s }
        return array.hexString
    }

    static func hexUpper(_ bytes: some Collection<UInt8>) -> String { bytes.hexString.uppercased() }

    static func hex(_ value: UInt64, digits: Int) -> String {
        let s = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - s.count)) + s
    }
}
