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
        if let playback = p.playback {
            out["playback-state"] = ["creation-date": playback.creationDate, "state": playback.state.rawValue, "session-id": playback.sessionID] as [String: Any]
        }
        out["streaming-indicator"] = p.streamingIndicator?.rawValue ?? 0
        out["transaction-id"] = p.transactionID ?? 0
        let security = ClientSecurity(p)
        switch security.level {
        case .main: out["security-level"] = "main"
        case .baseline: out["security-level"] = "baseline"
        default: out["security-level"] = hex(security.level.rawValue, digits: 16)
        }
        out["kdl-version"] = p.effectiveKDLVersion ?? 0
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
        if let sync = p.sync {
            switch sync {
            case .v1(let s):
                out["offline-sync"] = ["version": 1, "duration-to-expiry": s.durationToExpiry, "content-id": hexUpper(s.contentID)] as [String: Any]
            case .v2(let s):
                let flags: [String: Bool] = [
                    "report": s.flags.contains(.report), "secure-invalidation": s.flags.contains(.secureInvalidation),
                    "secure-invalidation-all": s.flags.contains(.secureInvalidationAll), "success": s.flags.contains(.success),
                    "obj-not-found": s.flags.contains(.objectNotFound), "obj-expired": s.flags.contains(.objectExpired),
                ]
                out["offline-sync"] = [
                    "version": 2, "duration-to-expiry": s.durationToExpiry, "server-challenge": s.serverChallenge, "flags": flags,
                    "title-id": hexUpper(s.titleID), "records-invalidated": s.invalidatedStreamIDs.count,
                    "invalidated-stream-ids": s.invalidatedStreamIDs.map(hexUpper),
                ] as [String: Any]
            }
        }
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
