import Wire

/// The stored form of an offline license record: compact JSON, bytes as lower-case hex.
///
/// `{"stream", "title"?, "asset" (hex), "device" (hex), "issued", "storage", "playback",
/// "state" ("active" | "invalidated" | "expired" | "not-found"), "invalidated-at"?,
/// "reported-expires-at"?, "last-sync-at"?}`. Stores key records by stream ID hex per account.
extension OfflineLicenseRecord {
    /// The record as JSON bytes.
    package func jsonBytes() -> [UInt8] {
        var o: [String: JSONValue] = [
            "stream": .string(HexEncoding.encode(streamID)), "asset": .string(HexEncoding.encode(assetID)),
            "device": .string(HexEncoding.encode(deviceID)), "issued": .integer(issuedAt),
            "storage": .integer(Int64(storageSeconds)), "playback": .integer(Int64(playbackSeconds)),
        ]
        if let titleID { o["title"] = .string(HexEncoding.encode(titleID)) }
        switch state {
        case .active: o["state"] = .string("active")
        case .invalidated(let at):
            o["state"] = .string("invalidated")
            o["invalidated-at"] = .integer(at)
        case .expired: o["state"] = .string("expired")
        case .notFoundOnDevice: o["state"] = .string("not-found")
        }
        if let reportedExpiresAt { o["reported-expires-at"] = .integer(reportedExpiresAt) }
        if let lastSyncAt { o["last-sync-at"] = .integer(lastSyncAt) }
        return JSONValue.object(o).encoded()
    }

    /// Reads a stored record; nil when the bytes are not one (the store reports a corrupt record).
    package init?(json bytes: some Collection<UInt8>) {
        guard case .object(let o)? = try? JSONValue(parsing: bytes) else { return nil }
        func hex(_ key: String) -> [UInt8]? {
            guard case .string(let s)? = o[key] else { return nil }
            return HexEncoding.decode(s)
        }
        func int(_ key: String) -> Int64? {
            guard case .integer(let n)? = o[key] else { return nil }
            return n
        }
        guard let stream = hex("stream"), let asset = hex("asset"), let device = hex("device"), let issued = int("issued"),
            let storage = int("storage").flatMap(UInt32.init(exactly:)), let playback = int("playback").flatMap(UInt32.init(exactly:)),
            case .string(let stateName)? = o["state"]
        else { return nil }
        let state: State
        switch stateName {
        case "active": state = .active
        case "invalidated": state = .invalidated(at: int("invalidated-at") ?? issued)
        case "expired": state = .expired
        case "not-found": state = .notFoundOnDevice
        default: return nil
        }
        self.init(
            streamID: stream, titleID: hex("title"), assetID: asset, deviceID: device, issuedAt: issued,
            storageSeconds: storage, playbackSeconds: playback, state: state, reportedExpiresAt: int("reported-expires-at"), lastSyncAt: int("last-sync-at"))
    }
}
