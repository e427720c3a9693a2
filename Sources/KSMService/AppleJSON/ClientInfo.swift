import FairPlay
import Licensing
import Wire

/// What an SPC says about the client, in the field names and encodings of Apple's server JSON
/// (`get-client-info` and the informational fields of `create-ckc`, SDK 26).
///
/// The SPC's own typed values; ``write(to:)`` is the one place they become JSON.
package struct ClientInfo: Sendable {
    /// Text when the asset ID is printable UTF-8 (`skd://...`), lower-case hex otherwise.
    package var assetID: String
    package var hu: [UInt8]
    /// Zeros when the SPC has none (SDK 26 reports a playback state always).
    package var playback: MediaPlaybackInfo
    /// The streaming indicator's raw value; 0 when the SPC has none.
    package var streamingIndicator: UInt64
    /// 0 when the SPC has none.
    package var transactionID: UInt64
    /// The plaintext security level report's level; nil for none (or only the encrypted report), which
    /// SDK 26 writes as 16 zero digits.
    package var securityLevel: SecurityLevel?
    /// 0 when the SPC reports none.
    package var kdlVersion: UInt32
    /// All false when the SPC has no capabilities TLLV.
    package var capabilities: Capabilities
    package var deviceIdentity: DeviceIdentity?
    package var deviceInfo: DeviceInfo?
    package var vmDeviceInfo: VMDeviceInfo?
    package var sync: SyncRequest?
    /// The version field of any sync TLLV (SDK 26 reports `offline-sync` for every version above 0).
    package var syncVersion: UInt32?

    /// The fields Apple's reference KSM reports for an opened SPC.
    package init(_ request: SPCRequest) {
        let p = request.payload
        assetID = Self.assetIDString(request.assetID)
        hu = request.hu
        playback = p.playback ?? MediaPlaybackInfo(creationDate: 0, state: PlaybackState(rawValue: 0), sessionID: 0)
        streamingIndicator = p.streamingIndicator?.rawValue ?? 0
        transactionID = p.transactionID
        securityLevel = p.securityLevelReport?.level
        kdlVersion = p.kdlVersion
        capabilities = p.capabilities ?? Capabilities(low: 0)
        deviceIdentity = p.deviceIdentity
        deviceInfo = p.deviceInfo
        vmDeviceInfo = p.vmDeviceInfo
        sync = p.sync
        syncVersion = p.syncVersion
    }

    /// Writes the fields as members of the object `writer` has open, in Apple's order: `asset-id`,
    /// `playback-state` (when present), `hu` (upper-case hex), `streaming-indicator`, `transaction-id`,
    /// `security-level` (`main`, `baseline` or 16 upper-case hex digits), `kdl-version`, `capabilities`,
    /// then `device-identity`, `device-info`, `vm-device-info` and `offline-sync` when present.
    /// Versions and hashes are upper-case hex, zero-padded (8 digits for 32 bits, 16 for 64).
    package func write(to w: inout JSONWriter) {
        w.key("asset-id")
        w.write(string: assetID)
        w.key("playback-state")
        w.beginObject()
        w.key("creation-date")
        w.write(unsigned: UInt64(playback.creationDate))
        w.key("state")
        w.write(unsigned: UInt64(playback.state.rawValue))
        w.key("session-id")
        w.write(unsigned: playback.sessionID)
        w.endObject()
        w.key("hu")
        w.write(upperHex: hu)
        w.key("streaming-indicator")
        w.write(unsigned: streamingIndicator)
        w.key("transaction-id")
        w.write(unsigned: transactionID)
        w.key("security-level")
        switch securityLevel {
        case .main?: w.write(string: "main")
        case .baseline?: w.write(string: "baseline")
        default: w.write(upperHex: securityLevel?.rawValue ?? 0, digits: 16)
        }
        w.key("kdl-version")
        w.write(unsigned: UInt64(kdlVersion))
        w.key("capabilities")
        w.beginObject()
        w.key("hdcp")
        w.write(bool: capabilities.hdcpEnforcement)
        w.key("offline-key")
        w.write(bool: capabilities.offlineKey)
        w.key("secure-invalidation")
        w.write(bool: capabilities.secureInvalidation)
        w.key("offline-key-2")
        w.write(bool: capabilities.offlineKeyV2)
        w.key("security-level-baseline")
        w.write(bool: capabilities.securityLevelBaseline)
        w.key("security-level-main")
        w.write(bool: capabilities.securityLevelMain)
        w.endObject()
        if let d = deviceIdentity {
            w.key("device-identity")
            w.beginObject()
            w.key("fpdi-version")
            w.write(unsigned: UInt64(d.version))
            w.key("device-class")
            w.write(unsigned: UInt64(d.deviceClass))
            w.key("vendor-hash")
            w.write(upperHex: d.vendorHash, digits: 16)
            w.key("product-hash")
            w.write(upperHex: d.productHash, digits: 16)
            w.key("fps-ree-version")
            w.write(upperHex: UInt64(d.fairPlayVersionREE), digits: 8)
            w.key("fps-tee-version")
            w.write(upperHex: UInt64(d.fairPlayVersionTEE), digits: 8)
            w.key("os-version")
            w.write(upperHex: UInt64(d.osVersion), digits: 8)
            w.endObject()
        }
        if let d = deviceInfo {
            w.key("device-info")
            w.beginObject()
            w.key("device-type")
            w.write(upperHex: d.deviceType, digits: 16)
            w.key("os-version")
            w.write(upperHex: UInt64(d.osVersion), digits: 8)
            w.endObject()
        }
        if let v = vmDeviceInfo {
            w.key("vm-device-info")
            w.beginObject()
            w.key("host-device-class")
            w.write(unsigned: UInt64(v.hostDeviceClass))
            w.key("host-os-version")
            w.write(upperHex: UInt64(v.hostOSVersion), digits: 8)
            w.key("host-vm-protocol-version")
            w.write(unsigned: UInt64(v.hostVirtualizationProtocol))
            w.key("guest-device-class")
            w.write(unsigned: UInt64(v.guestDeviceClass))
            w.key("guest-os-version")
            w.write(upperHex: UInt64(v.guestOSVersion), digits: 8)
            w.key("guest-vm-protocol-version")
            w.write(unsigned: UInt64(v.guestVirtualizationProtocol))
            w.endObject()
        }
        if let syncVersion, syncVersion > 0 {
            // SDK 26: version and duration; from version 2 on (an unknown version shows zeros) the
            // challenge, the flags, the title ID when flagged valid, and the invalidated records.
            var v2 = SyncV2(serverChallenge: 0, flags: [], titleID: [], durationToExpiry: sync?.durationToExpiry ?? 0, invalidatedStreamIDs: [])
            if case .v2(let s)? = sync { v2 = s }
            w.key("offline-sync")
            w.beginObject()
            w.key("version")
            w.write(unsigned: UInt64(syncVersion))
            w.key("duration-to-expiry")
            w.write(unsigned: UInt64(v2.durationToExpiry))
            if syncVersion >= 2 {
                w.key("server-challenge")
                w.write(unsigned: v2.serverChallenge)
                w.key("flags")
                w.beginObject()
                w.key("report")
                w.write(bool: v2.flags.contains(.report))
                w.key("secure-invalidation")
                w.write(bool: v2.flags.contains(.secureInvalidation))
                w.key("secure-invalidation-all")
                w.write(bool: v2.flags.contains(.secureInvalidationAll))
                w.key("title-id-valid")
                w.write(bool: v2.flags.contains(.titleIDValid))
                w.key("success")
                w.write(bool: v2.flags.contains(.success))
                w.key("obj-not-found")
                w.write(bool: v2.flags.contains(.objectNotFound))
                w.key("obj-expired")
                w.write(bool: v2.flags.contains(.objectExpired))
                w.endObject()
                w.key("title-id")
                if v2.flags.contains(.titleIDValid) { w.write(upperHex: v2.titleID) } else { w.write(string: "") }
                w.key("records-invalidated")
                w.write(integer: Int64(v2.invalidatedStreamIDs.count))
                w.key("invalidated-stream-ids")
                w.beginArray()
                for id in v2.invalidatedStreamIDs { w.write(upperHex: id) }
                w.endArray()
            }
            w.endObject()
        }
    }

    /// The fields as members (what ``write(to:)`` writes, read back), for callers that add their own
    /// (`ksm inspect`).
    package static func fields(_ request: SPCRequest) -> [String: JSONValue] {
        var w = JSONWriter()
        w.beginObject()
        ClientInfo(request).write(to: &w)
        w.endObject()
        // The writer's output is JSON by construction.
        guard case .object(let members)? = try? JSONValue(parsing: w.bytes) else { return [:] }
        return members
    }

    /// Asset IDs are usually text (`skd://...`); bytes that are not UTF-8 are shown as hex.
    package static func assetIDString(_ bytes: some Collection<UInt8>) -> String {
        let array = Array(bytes)
        if let s = String(validating: array, as: UTF8.self), s.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) { return s }
        return array.hexString
    }
}
