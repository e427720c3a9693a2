import FairPlay
import Licensing
import Wire

// The shape readers behind `LicenseHTTPRequest.parse`. Every message names a field or a rule and
// never quotes a value from the body.
extension LicenseHTTPRequest {
    // MARK: SPC and base64

    /// `spc` when its first 8 bytes can start an SPC: the big-endian version 1, 2 or 3 of
    /// `SPCContainer` (versions 1 and 2: guide table 2-3; 3: SDK 26), then the reserved field.
    static func checkedSPC(_ spc: [UInt8], shape: Shape) throws(LicenseHTTPRequestError) -> [UInt8] {
        guard spc.count <= SPCContainer.maximumSize else { throw .spcTooLarge(spc.count, shape: shape) }
        guard spc.count >= 8 else {
            throw .bad(shape, "SPC of \(spc.count) bytes is shorter than the 8 bytes (version, reserved) every SPC starts with")
        }
        let version = spc[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard (1...3).contains(version) else {
            throw LicenseHTTPRequestError(
                status: 400, "not an SPC: its version field is \(version), not 1, 2 or 3", code: KSMStatus(.spcVersionError), shape: shape)
        }
        return spc
    }

    /// The SPC from base64 `text` (named `what` in errors), then ``checkedSPC(_:shape:)``.
    static func decodeSPC(_ text: some Collection<UInt8>, what: String, shape: Shape) throws(LicenseHTTPRequestError) -> [UInt8] {
        guard !text.isEmpty else { throw .bad(shape, "\(what) is empty") }
        guard let spc = lenientBase64(text) else {
            throw .bad(shape, "\(what) is not valid base64 (standard or URL-safe alphabet, padding optional): truncated, or a stray character")
        }
        return try checkedSPC(spc, shape: shape)
    }

    /// Base64 as players send it, made into the strict form `Base64` (and the job schema) reads:
    /// line breaks, tabs and spaces dropped (wrapped output of the `base64` tool), the URL-safe
    /// alphabet (`-`, `_`, which Verimatrix allows) mapped to the standard one, and missing padding
    /// restored. Nil when the result is still not base64 (a length of 4n+1 symbols, a symbol after
    /// `=`, a character outside both alphabets).
    static func lenientBase64(_ text: some Collection<UInt8>) -> [UInt8]? {
        var symbols: [UInt8] = []
        symbols.reserveCapacity(text.count + 3)
        for byte in text {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case UInt8(ascii: "-"): symbols.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): symbols.append(UInt8(ascii: "/"))
            default: symbols.append(byte)
            }
        }
        guard !symbols.isEmpty else { return nil }
        if symbols.last != UInt8(ascii: "=") {
            switch symbols.count % 4 {
            case 0: break
            case 1: return nil
            case let rest: symbols.append(contentsOf: repeatElement(UInt8(ascii: "="), count: 4 - rest))
            }
        }
        return Base64.decode(symbols)
    }

    /// A byte a base64 body may hold: either alphabet, padding, a line break.
    static func isBase64Text(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "="), 0x0A, 0x0D: true
        default: false
        }
    }

    /// `bytes` without a leading UTF-8 byte order mark and without white space (SP, HT, CR, LF) at
    /// either end: `curl -d @file` and editors add a final newline, some encoders a BOM.
    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var text = bytes
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        while let first = text.first, isSpace(first) { text = text.dropFirst() }
        while let last = text.last, isSpace(last) { text = text.dropLast() }
        return text
    }

    // MARK: Form

    /// The form's bytes when `text` is a form body, else nil.
    ///
    /// A form is printable ASCII that starts with `spc=`, or with `spc%3D` (Shaka's tutorial
    /// percent-encodes the whole `spc=…` string: it is decoded once here), or holds a `&`, or an `=`
    /// that is not trailing base64 padding (`assetId=…&spc=…`, DRMtoday's extra fields).
    ///
    /// The bytes returned keep the spaces that followed `text` in `body`: a space in `spc` is a `+`
    /// a proxy decoded, and base64 may end in `+`, so trimming them would cut the SPC short.
    static func formBody(_ text: ArraySlice<UInt8>, in body: [UInt8]) throws(LicenseHTTPRequestError) -> [UInt8]? {
        guard text.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        var end = text.endIndex
        while end < body.endIndex, body[end] == 0x20 { end += 1 }
        let kept = body[text.startIndex..<end]
        let head = text.prefix(6).map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 }
        if head.elementsEqual("spc%3d".utf8) {
            // `encodeURIComponent` writes `+` as %2B, so a `+` left raw is a `+` here too.
            guard let decoded = percentDecode(kept, plusIsSpace: false) else {
                throw .bad(.form, "the percent-encoded form body has a malformed % escape")
            }
            return decoded
        }
        if head.starts(with: "spc=".utf8) || text.contains(UInt8(ascii: "&")) { return Array(kept) }
        let equals = UInt8(ascii: "=")
        let innerEquals = zip(text, text.dropFirst()).contains { $0 == equals && $1 != equals }
        return innerEquals ? Array(kept) : nil
    }

    /// Reads `spc` and `assetId` from a form body; other fields (`variantId`, custom data) are ignored.
    ///
    /// The `+` rule: in `spc`, `+` is a literal `+`, and a space (what a form decoder or a proxy makes
    /// of a raw `+`) is read back as `+`. Apple's older Safari sample posts `'spc=' +
    /// base64EncodeUint8Array(message)` without URL-encoding it, so its `+` arrive raw; a client that
    /// does encode sends `%2B`, which decodes to the same `+`. Base64 has no space, so neither reading
    /// can turn invalid base64 into valid base64 or change what valid base64 decodes to: a `+` that
    /// meant a space would have made the value invalid anyway. `assetId` (URL-encoded by the sample's
    /// `encodeURIComponent`) is decoded the usual form way, `+` as a space.
    static func parseForm(_ body: [UInt8]) throws(LicenseHTTPRequestError) -> LicenseHTTPRequest {
        var spcText: [UInt8]?
        var assetID: String?
        for field in body.split(separator: UInt8(ascii: "&")) {
            let equals = field.firstIndex(of: UInt8(ascii: "=")) ?? field.endIndex
            let value = equals == field.endIndex ? field[equals...] : field[field.index(after: equals)...]
            guard let name = percentDecode(field[..<equals], plusIsSpace: true) else {
                throw .bad(.form, "a form field name has a malformed % escape")
            }
            switch String(decoding: name, as: UTF8.self) {
            case "spc":
                guard spcText == nil else { throw .bad(.form, "the form has more than one spc field") }
                guard let decoded = percentDecode(value, plusIsSpace: false) else {
                    throw .bad(.form, "the form's spc field has a malformed % escape")
                }
                spcText = decoded.map { $0 == 0x20 ? UInt8(ascii: "+") : $0 }
            case "assetId":
                guard assetID == nil else { throw .bad(.form, "the form has more than one assetId field") }
                guard let decoded = percentDecode(value, plusIsSpace: true), let text = String(validating: decoded, as: UTF8.self) else {
                    throw .bad(.form, "the form's assetId field is not percent-encoded UTF-8")
                }
                assetID = try checkedField(text, "the form's assetId field", shape: .form)
            default: continue
            }
        }
        guard let spcText else { throw .bad(.form, "the form has no spc field") }
        return LicenseHTTPRequest(shape: .form, spc: try decodeSPC(spcText, what: "the form's spc field", shape: .form), assetID: assetID)
    }

    /// `text` with each `%XX` replaced by its byte (and `+` by a space when `plusIsSpace`); nil when a
    /// `%` is not followed by two hex digits.
    static func percentDecode(_ text: some Collection<UInt8>, plusIsSpace: Bool) -> [UInt8]? {
        func hex(_ byte: UInt8?) -> UInt8? {
            switch byte {
            case let b? where (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b): b - UInt8(ascii: "0")
            case let b? where (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(b): b - UInt8(ascii: "a") + 10
            case let b? where (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(b): b - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var output: [UInt8] = []
        output.reserveCapacity(text.count)
        var bytes = text.makeIterator()
        while let byte = bytes.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = hex(bytes.next()), let low = hex(bytes.next()) else { return nil }
                output.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace: output.append(0x20)
            default: output.append(byte)
            }
        }
        return output
    }

    // MARK: JSON

    /// Reads the JSON shapes: Apple's `fairplay-streaming-request` first, then `{"spc": …}`.
    static func parseJSON(_ text: ArraySlice<UInt8>) throws(LicenseHTTPRequestError) -> LicenseHTTPRequest {
        let value: JSONValue
        do throws(JSONParser.Error) {
            value = try JSONParser.parse(text)
        } catch {
            throw .bad(.json, "the body starts with { but is not valid JSON: \(error)")
        }
        guard case .object(let top) = value else { throw .bad(.json, "the JSON body is not an object") }
        if let request = top["fairplay-streaming-request"] { return try parseApple(request) }
        guard let spc = top["spc"] else {
            throw .bad(.json, "the JSON body has neither \"spc\" nor \"fairplay-streaming-request\"")
        }
        guard case .string(let spcText) = spc else { throw .bad(.json, "\"spc\" must be a string of base64, not \(spc.kind)") }
        // Eluvio's adaptation of Apple's HLS Catalog sends `assetId`; both at once would be ambiguous.
        let dashed = try optionalString(top, "asset-id", shape: .json)
        let camel = try optionalString(top, "assetId", shape: .json)
        if dashed != nil, camel != nil { throw .bad(.json, "the JSON body has both \"asset-id\" and \"assetId\"") }
        var priority: LicenseJob.Priority?
        switch top["priority"] {
        case nil, .null?: break
        case .string(let name)? where LicenseJob.Priority(rawValue: name) != nil: priority = LicenseJob.Priority(rawValue: name)
        default: throw .bad(.json, "\"priority\" must be \"continuity\", \"new\" or \"prefetch\"")
        }
        return LicenseHTTPRequest(
            shape: .json, spc: try decodeSPC(spcText.utf8, what: "\"spc\"", shape: .json), assetID: dashed ?? camel, priority: priority)
    }

    /// Reads `fps_safari_support.js`'s request: one streaming key with `spc`, optional `id` (echoed)
    /// and `uri` (Apple's key renewal sample, as published, sends none).
    static func parseApple(_ value: JSONValue) throws(LicenseHTTPRequestError) -> LicenseHTTPRequest {
        guard case .object(let request) = value else {
            throw .bad(.apple, "\"fairplay-streaming-request\" must be an object, not \(value.kind)")
        }
        // Apple's KSM library interface, where the caller supplies content keys and policy: a player
        // never sends it, and serving it here would let anyone on the internet mint CKCs for any key.
        for operation in ["create-ckc", "get-client-info"] where request[operation] != nil {
            throw .bad(
                .apple,
                "\"\(operation)\" is Apple's back-office KSM interface (the caller supplies the content key), not served to players: "
                    + "send the SPC as the one entry of \"streaming-keys\"")
        }
        if let version = request["version"], version != .integer(1) {
            throw .bad(.apple, "\"fairplay-streaming-request\".\"version\" must be 1")
        }
        guard let keysValue = request["streaming-keys"] else {
            throw .bad(.apple, "\"fairplay-streaming-request\" has no \"streaming-keys\"")
        }
        guard case .array(let keys) = keysValue else { throw .bad(.apple, "\"streaming-keys\" must be an array, not \(keysValue.kind)") }
        guard keys.count == 1 else {
            throw .bad(.apple, "exactly one streaming key per request is supported; this request has \(keys.count)")
        }
        guard case .object(let key) = keys[0] else { throw .bad(.apple, "\"streaming-keys\"[0] must be an object, not \(keys[0].kind)") }
        var id: JSONValue?
        switch key["id"] {
        case nil, .null?: break
        case .integer(let n)?: id = .integer(n)
        case .number(let n)?: id = .number(n)
        case .string(let text)?: id = .string(try checkedField(text, "\"streaming-keys\"[0].\"id\"", shape: .apple) ?? text)
        case let other?: throw .bad(.apple, "\"streaming-keys\"[0].\"id\" must be a number or a string, not \(other.kind)")
        }
        let uri = try optionalString(key, "uri", shape: .apple)
        guard let spc = key["spc"] else { throw .bad(.apple, "\"streaming-keys\"[0] has no \"spc\"") }
        guard case .string(let spcText) = spc else {
            throw .bad(.apple, "\"streaming-keys\"[0].\"spc\" must be a string of base64, not \(spc.kind)")
        }
        return LicenseHTTPRequest(
            shape: .apple, spc: try decodeSPC(spcText.utf8, what: "\"streaming-keys\"[0].\"spc\"", shape: .apple), assetID: uri, streamingKeyID: id)
    }

    /// Member `key` of `object` when a string; nil when absent, null or "".
    static func optionalString(_ object: [String: JSONValue], _ key: String, shape: Shape) throws(LicenseHTTPRequestError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?: return try checkedField(text, "\"\(key)\"", shape: shape)
        case let other?: throw .bad(shape, "\"\(key)\" must be a string, not \(other.kind)")
        }
    }

    /// `text`, or nil when empty; refused when longer than ``maximumFieldLength`` or holding a control
    /// character (it is logged and echoed).
    static func checkedField(_ text: String, _ what: String, shape: Shape) throws(LicenseHTTPRequestError) -> String? {
        guard !text.isEmpty else { return nil }
        guard text.utf8.count <= maximumFieldLength else {
            throw .bad(shape, "\(what) is \(text.utf8.count) bytes, longer than the \(maximumFieldLength)-byte limit")
        }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .bad(shape, "\(what) holds a control character")
        }
        return text
    }

    /// `text` with control characters as spaces, cut to `limit` characters: safe to put in a message
    /// or a one-line body.
    static func printable(_ text: String, limit: Int) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars.prefix(limit) {
            scalars.append(scalar.value < 0x20 || scalar.value == 0x7F ? " " : scalar)
        }
        return String(scalars) + (text.unicodeScalars.count > limit ? "…" : "")
    }
}
