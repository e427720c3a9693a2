/// Writes ``JSONValue`` trees as compact JSON bytes, without Foundation.
///
/// Every reply passes through here. Keys are sorted by their UTF-8 bytes, so equal trees give equal
/// bytes (a redelivered job's reply is byte-identical). Strings escape only what RFC 8259 requires
/// (quote, backslash, control characters); `/` and non-ASCII text are written as they are.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []

    public init(reservingCapacity capacity: Int = 512) {
        bytes.reserveCapacity(capacity)
    }

    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: append("null")
        case .bool(let b): write(bool: b)
        case .integer(let i): write(integer: i)
        case .number(let d):
            // The parser never yields a non-finite number; a caller-made one becomes null, as JSON has none.
            append(d.isFinite ? (d == d.rounded(.towardZero) && abs(d) < 1e15 ? String(Int64(d)) : "\(d)") : "null")
        case .string(let s): write(string: s)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (offset, key) in keys.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                write(string: key)
                bytes.append(UInt8(ascii: ":"))
                // Every key came from `members`.
                write(members[key] ?? .null)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    // MARK: Flat objects, member by member

    /// Whether the next ``key(_:)`` needs a comma first.
    private var hasMember = false

    /// Opens a flat object written member by member, for envelopes written once per job, where a
    /// `[String: JSONValue]` and its key sort cost more than the content. The caller writes keys in
    /// UTF-8 byte order, so the bytes equal ``write(_:)`` of the same object. Not nestable.
    public mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        hasMember = false
    }

    /// A member's key (and the comma before it, from the second member on); then write its value.
    public mutating func key(_ key: StaticString) {
        if hasMember { bytes.append(UInt8(ascii: ",")) }
        hasMember = true
        bytes.append(UInt8(ascii: "\""))
        // `withUTF8Buffer`, not `utf8Start`: a one-scalar literal has no pointer representation.
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
    }

    /// An integer value.
    public mutating func write(integer: Int64) {
        append(String(integer))
    }

    /// A boolean value.
    public mutating func write(bool: Bool) {
        append(bool ? "true" : "false")
    }

    /// A string value holding the padded base64 of `binary`, encoded straight into the output
    /// (base64 needs no escaping).
    public mutating func write(base64 binary: [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        Base64.append(binary, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A quoted string; runs that need no escape are copied in one piece.
    public mutating func write(string: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = string
        text.withUTF8 { utf8 in
            var runStart = 0
            for (offset, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<offset]))
                switch byte {
                case 0x22: bytes.append(contentsOf: [0x5C, 0x22])
                case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                case 0x08: bytes.append(contentsOf: [0x5C, UInt8(ascii: "b")])
                case 0x0C: bytes.append(contentsOf: [0x5C, UInt8(ascii: "f")])
                default:
                    bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30])
                    bytes.append(Self.hexDigits[Int(byte >> 4)])
                    bytes.append(Self.hexDigits[Int(byte & 0x0F)])
                }
                runStart = offset + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
