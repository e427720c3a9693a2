import FairPlay
import Licensing
import Wire

/// One `create-ckc` operation's own fields (`check-in` and its one `asset-info`), read with the
/// leniency of Apple's SDK 26 JSON reader (`base/parse_json`), which its sample inputs rely on.
struct AssetInfo: Sendable {
    var checkIn = false
    /// SDK 26 uses 16 zero bytes when the request gives no key.
    var contentKey = [UInt8](repeating: 0, count: 16)
    var contentIV = [UInt8](repeating: 0, count: 16)
    /// Nil: no `content-type`, or one SDK 26 does not name (its business rules then answer paramErr).
    var contentType: ContentType?
    /// Apple's JSON default is type 0.
    var hdcp = HDCPRequirement.type0
    /// Nil for no lease (absent, or 0).
    var leaseSeconds: UInt32?
    var offline: Offline?
    var encryptionScheme: String?

    /// The `offline-hls` object.
    struct Offline: Sendable {
        /// 16 bytes each, as SDK 26 pads or cuts them; nil when absent or empty.
        var streamID: [UInt8]?
        var titleID: [UInt8]?
        var rentalSeconds: UInt32 = 0
        var playbackSeconds: UInt32 = 0
    }

    init() {}

    /// - Throws: `parameterError` for more or fewer than one `asset-info` object, a content key or IV
    ///   that is not hex, an `hdcp-type` other than -1, 0, 1, or an `offline-hls` with only one of
    ///   stream ID and title ID; `internalError` for a stream or title ID that is not hex (SDK 26 fails
    ///   there by panicking, which its entry point reports as internalErr).
    init(_ op: JSONFields) throws(FairPlayError) {
        checkIn = Self.bool(op.value("check-in")) ?? false
        guard case .array(let list)? = op.value("asset-info") else { return }
        guard list.count == 1, case .object(let members) = list[0] else {
            throw FairPlayError(.parameterError, "\"asset-info\" must hold exactly one object, not \(list.count)")
        }
        let info = JSONFields(members, prefix: "asset-info")
        if case .string(let text)? = info.value("content-key") { contentKey = try Self.lenientHex(text, "content-key") }
        if case .string(let text)? = info.value("content-iv") { contentIV = try Self.lenientHex(text, "content-iv") }
        if let lease = Self.unsigned(info.value("lease-duration")), lease != 0 {
            leaseSeconds = UInt32(truncatingIfNeeded: lease)
        }
        if case .object(let object)? = info.value("offline-hls") {
            var o = Offline()
            o.streamID = try Self.offlineID(object["stream-id"], "stream-id")
            o.titleID = try Self.offlineID(object["title-id"], "title-id")
            o.rentalSeconds = Self.durationField(object["rental-duration"])
            o.playbackSeconds = Self.durationField(object["playback-duration"])
            guard (o.streamID == nil) == (o.titleID == nil) else {
                throw FairPlayError(.parameterError, "\"offline-hls\" needs both \"stream-id\" and \"title-id\", or neither")
            }
            offline = o
        }
        if let value = info.value("hdcp-type") {
            // A number, or a numeric string; SDK 26 refuses anything else that is present.
            var number: Int?
            switch value {
            case .integer(let n): number = Int(exactly: n)
            case .string(let text): number = Int(text)
            default: number = nil
            }
            guard let n = number, let requirement = HDCPRequirement(hdcpType: n) else {
                throw FairPlayError(.parameterError, "\"hdcp-type\" must be -1, 0 or 1")
            }
            hdcp = requirement
        }
        if case .string(let text)? = info.value("encryption-scheme") { encryptionScheme = text }
        if case .string(let text)? = info.value("content-type") { contentType = ContentType(rawValue: text) }
    }

    /// SDK 26's key and IV reading: "0x" dropped, "" or "0" are zeros, an odd digit count gets a
    /// leading 0, and the result is cut or zero-padded to 16 bytes.
    static func lenientHex(_ text: String, _ name: String) throws(FairPlayError) -> [UInt8] {
        var digits = Substring(text)
        if digits.hasPrefix("0x") { digits = digits.dropFirst(2) }
        var bytes: [UInt8] = []
        if !digits.isEmpty && digits != "0" {
            let even = digits.count % 2 == 0 ? String(digits) : "0" + digits
            guard let decoded = [UInt8](hexString: even) else {
                throw FairPlayError(.parameterError, "\"\(name)\" is not hex")
            }
            bytes = decoded
        }
        return fitted(bytes)
    }

    /// A stream or title ID: hex, cut or zero-padded to 16 bytes; nil when absent or empty.
    static func offlineID(_ value: JSONValue?, _ name: String) throws(FairPlayError) -> [UInt8]? {
        guard case .string(let text)? = value, !text.isEmpty else { return nil }
        guard text.count % 2 == 0, let bytes = [UInt8](hexString: text) else {
            throw FairPlayError(.internalError, "\"offline-hls\".\"\(name)\" is not hex")
        }
        return fitted(bytes)
    }

    static func fitted(_ bytes: [UInt8]) -> [UInt8] {
        bytes.count >= 16 ? Array(bytes.prefix(16)) : bytes + [UInt8](repeating: 0, count: 16 - bytes.count)
    }

    /// A JSON boolean, as serde's `as_bool` (SDK 26 reads `check-in` so); nil for anything else.
    static func bool(_ value: JSONValue?) -> Bool? {
        if case .bool(let b)? = value { return b }
        return nil
    }

    /// A non-negative JSON integer, as serde's `as_u64`; nil for anything else (a fraction too).
    static func unsigned(_ value: JSONValue?) -> UInt64? {
        if case .integer(let n)? = value, n >= 0 { return UInt64(n) }
        return nil
    }

    /// A duration given as a number or a numeric string; 0 otherwise.
    static func durationField(_ value: JSONValue?) -> UInt32 {
        if let n = unsigned(value) { return UInt32(truncatingIfNeeded: n) }
        if case .string(let text)? = value { return UInt32(text) ?? 0 }
        return 0
    }
}
