/// Writes JSON as compact bytes, without Foundation: whole ``JSONValue`` trees, or documents member by
/// member with the typed writers below.
///
/// Every reply passes through here. ``write(_:)`` sorts keys by their UTF-8 bytes, so equal trees give
/// equal bytes (a redelivered job's reply is byte-identical). Strings escape only what RFC 8259 requires
/// (quote, backslash, control characters); `/` and non-ASCII text are written as they are.
///
/// Written member by member, objects and arrays nest: the writer puts the comma before every value
/// but the first of its object or array, so a caller only says where each begins and ends, and which
/// key comes next. Keys come out in the order written.
package struct JSONWriter {
    package private(set) var bytes: [UInt8] = []

    /// Whether the next value or key follows a sibling and so needs a comma first.
    private var needsComma = false

    package init(reservingCapacity capacity: Int = 512) {
        bytes.reserveCapacity(capacity)
    }

    /// Reserves room for `count` more bytes (a caller that knows what it is about to write).
    package mutating func reserveCapacity(adding count: Int) {
        bytes.reserveCapacity(bytes.count + count)
    }

    /// A whole value; objects with their keys sorted by UTF-8 bytes.
    package mutating func write(_ value: JSONValue) {
        separate()
        writeTree(value, indent: nil)
    }

    /// A whole value over several lines, each level indented two spaces further, for people reading
    /// a command's output; the same members in the same order as ``write(_:)``.
    package mutating func writeIndented(_ value: JSONValue) {
        separate()
        writeTree(value, indent: 0)
    }

    /// Starts a new line at `level` when indenting; nothing when compact.
    private mutating func lineBreak(_ level: Int?) {
        guard let level else { return }
        bytes.append(0x0A)
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }

    private mutating func writeTree(_ value: JSONValue, indent: Int?) {
        let inner = indent.map { $0 + 1 }
        switch value {
        case .null: append("null")
        case .bool(let b): append(b ? "true" : "false")
        case .integer(let i): appendDecimal(i)
        case .number(let d):
            // The parser never yields a non-finite number; a caller-made one becomes null, as JSON has none.
            append(d.isFinite ? (d == d.rounded(.towardZero) && abs(d) < 1e15 ? String(Int64(d)) : "\(d)") : "null")
        case .string(let s): appendQuoted(s)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                lineBreak(inner)
                writeTree(element, indent: inner)
            }
            if !elements.isEmpty { lineBreak(indent) }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (offset, key) in keys.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                lineBreak(inner)
                appendQuoted(key)
                bytes.append(UInt8(ascii: ":"))
                if indent != nil { bytes.append(UInt8(ascii: " ")) }
                // Every key came from `members`.
                writeTree(members[key] ?? .null, indent: inner)
            }
            if !members.isEmpty { lineBreak(indent) }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// The comma before a value or key that follows a sibling; afterwards a sibling follows.
    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
    }

    // MARK: Member by member

    /// Opens an object written member by member, for documents written once per job or result, where
    /// a `[String: JSONValue]` and its key sort cost more than the content. Keys come out in the order
    /// the caller writes them: in UTF-8 byte order, the bytes equal ``write(_:)`` of the same object.
    package mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// A member's key (and the comma before it, from the second member on); then write its value.
    package mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        // `withUTF8Buffer`, not `utf8Start`: a one-scalar literal has no pointer representation.
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    package mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Opens an array written element by element: each value written until ``endArray()`` is one.
    package mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    package mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// A line feed, after a document (its last line, or between JSON Lines); not inside one.
    package mutating func newline() {
        bytes.append(0x0A)
        needsComma = false
    }

    /// An integer value.
    package mutating func write(integer: Int64) {
        separate()
        appendDecimal(integer)
    }

    /// An unsigned integer value, all 64 bits of it (a FairPlay session ID or transaction ID as it is).
    package mutating func write(unsigned: UInt64) {
        separate()
        appendDecimal(unsigned)
    }

    /// A boolean value.
    package mutating func write(bool: Bool) {
        separate()
        append(bool ? "true" : "false")
    }

    /// `null`.
    package mutating func writeNull() {
        separate()
        append("null")
    }

    /// A string value holding the padded base64 of `binary`, encoded straight into the output
    /// (base64 needs no escaping).
    package mutating func write(base64 binary: [UInt8]) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        Base64.append(binary, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A string value holding `binary` in upper-case hex, two digits a byte (needs no escaping).
    package mutating func write(upperHex binary: [UInt8]) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        HexEncoding.append(binary, to: &bytes, uppercase: true)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A string value holding `value` in upper-case hex, zero-padded to at least `digits` digits
    /// (`write(upperHex: 0xF0100, digits: 8)` writes `"000F0100"`; a wider value keeps all its digits).
    package mutating func write(upperHex value: UInt64, digits: Int) {
        separate()
        let significant = value == 0 ? 1 : (67 - value.leadingZeroBitCount) / 4
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(0, digits - significant)))
        // The value's bytes, most significant first, as hex; an odd digit count drops a leading 0.
        let wide = HexEncoding.encode(withUnsafeBytes(of: value.bigEndian, Array.init), uppercase: true).utf8
        bytes.append(contentsOf: wide.suffix(significant))
        bytes.append(UInt8(ascii: "\""))
    }

    /// A quoted string; runs that need no escape are copied in one piece.
    package mutating func write(string: String) {
        separate()
        appendQuoted(string)
    }

    private mutating func appendDecimal(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDecimal(value.magnitude)
    }

    /// The decimal digits of `value`, most significant first, without a temporary string.
    private mutating func appendDecimal(_ value: UInt64) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for UInt64.max's 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var rest = value
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    private mutating func appendQuoted(_ string: String) {
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
                    HexEncoding.append([byte], to: &bytes)
                }
                runStart = offset + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
