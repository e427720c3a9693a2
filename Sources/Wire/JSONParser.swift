/// A strict RFC 8259 parser from bytes straight to ``JSONValue``, without Foundation.
///
/// Every job and policy document passes through here, so it avoids Foundation's `JSONDecoder`
/// (several times slower for a job, and its errors cannot name the offending byte). Stricter than
/// many parsers on purpose: a duplicate object key is an error (two `spc` fields must not mean
/// whichever one a given parser keeps), invalid UTF-8 and unpaired surrogates are errors, and nesting
/// is bounded so hostile input cannot exhaust the stack.
package struct JSONParser {
    /// Why bytes are not JSON: what was wrong and at which byte offset. Never quotes the input.
    package struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        package var offset: Int
        package var reason: String
        package var description: String { "\(reason) at byte \(offset)" }

        package init(offset: Int, reason: String) {
            self.offset = offset
            self.reason = reason
        }
    }

    /// Deep enough for any envelope or policy; shallow enough for a 1 MiB thread stack.
    package static let defaultMaximumDepth = 64

    private let bytes: [UInt8]
    private var index = 0
    private let maximumDepth: Int
    /// The top-level member whose plain string is kept as bytes (``parse(_:rawStringMember:maximumDepth:)``).
    private let rawMember: String?
    private var rawRange: Range<Int>?
    /// ``parse(_:maximumDepth:allowingTrailingCommas:)``'s one leniency.
    private let trailingCommas: Bool

    private init(_ bytes: [UInt8], maximumDepth: Int, rawMember: String? = nil, trailingCommas: Bool = false) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.rawMember = rawMember
        self.trailingCommas = trailingCommas
    }

    /// Parses one document; only white space may surround it.
    ///
    /// With `allowingTrailingCommas`, one comma may follow the last member of an object or the last
    /// element of an array (`[1, 2,]`, `{"a": 1,}`), as in JSON5 and Apple's sample requests for its
    /// server JSON interface. An empty `[,]` or `{,}`, or two commas in a row, stay errors. Default: false.
    package static func parse(
        _ input: some Collection<UInt8>, maximumDepth: Int = defaultMaximumDepth, allowingTrailingCommas: Bool = false
    ) throws(Error) -> JSONValue {
        try parse(input, rawStringMember: nil, maximumDepth: maximumDepth, allowingTrailingCommas: allowingTrailingCommas).value
    }

    /// Parses one document as ``parse(_:maximumDepth:)`` does, with one difference: when it is an
    /// object whose member `rawStringMember` is a string of ASCII without escapes or control characters, that
    /// string comes back as a slice of the input (its entry in the object is `""`), not as a `String`.
    /// A job's base64 SPC is most of its bytes and is only ever decoded: making a `String` of it
    /// first cost a copy and a validation per job. Any other string takes the usual path.
    package static func parse(
        _ input: some Collection<UInt8>, rawStringMember: String?, maximumDepth: Int = defaultMaximumDepth, allowingTrailingCommas: Bool = false
    ) throws(Error) -> (value: JSONValue, rawString: ArraySlice<UInt8>?) {
        var parser = JSONParser(Array(input), maximumDepth: maximumDepth, rawMember: rawStringMember, trailingCommas: allowingTrailingCommas)
        parser.skipWhiteSpace()
        let value = try parser.value(depth: 0)
        parser.skipWhiteSpace()
        guard parser.index == parser.bytes.count else { throw parser.fail("unexpected data after the document") }
        return (value, parser.rawRange.map { parser.bytes[$0] })
    }

    private func fail(_ reason: String, at offset: Int? = nil) -> Error {
        Error(offset: offset ?? index, reason: reason)
    }

    private mutating func skipWhiteSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) throws(Error) -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fail("unexpected character")
        }
    }

    private mutating func literal(_ word: StaticString) throws(Error) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw fail("unexpected end of input") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
            throw fail("invalid literal")
        }
        index += count
    }

    private mutating func object(depth: Int) throws(Error) -> JSONValue {
        guard depth <= maximumDepth else { throw fail("nesting deeper than \(maximumDepth)") }
        index += 1
        // Room for a job envelope's fields up front (the top level only): growing a dictionary
        // rehashes every member.
        var members = [String: JSONValue](minimumCapacity: depth == 1 ? 12 : 0)
        skipWhiteSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhiteSpace()
            guard index < bytes.count else { throw fail("unexpected end of input in an object") }
            guard bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let keyOffset = index
            let key = try string()
            skipWhiteSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':' after a key") }
            index += 1
            skipWhiteSpace()
            let member: JSONValue
            if depth == 1, rawMember == key, let range = plainASCIIString() {
                rawRange = range
                member = .string("")
            } else {
                member = try value(depth: depth)
            }
            guard members.updateValue(member, forKey: key) == nil else {
                throw fail("duplicate key", at: keyOffset)
            }
            skipWhiteSpace()
            guard index < bytes.count else { throw fail("unexpected end of input in an object") }
            switch bytes[index] {
            case UInt8(ascii: ","):
                index += 1
                if trailingCommas, closes(UInt8(ascii: "}")) { return .object(members) }
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default: throw fail("expected ',' or '}' in an object")
            }
        }
    }

    private mutating func array(depth: Int) throws(Error) -> JSONValue {
        guard depth <= maximumDepth else { throw fail("nesting deeper than \(maximumDepth)") }
        index += 1
        var elements: [JSONValue] = []
        skipWhiteSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhiteSpace()
            elements.append(try value(depth: depth))
            skipWhiteSpace()
            guard index < bytes.count else { throw fail("unexpected end of input in an array") }
            switch bytes[index] {
            case UInt8(ascii: ","):
                index += 1
                if trailingCommas, closes(UInt8(ascii: "]")) { return .array(elements) }
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default: throw fail("expected ',' or ']' in an array")
            }
        }
    }

    /// After a comma: whether `bracket` comes next (past white space), which then is consumed.
    /// Otherwise the index is left where it was.
    private mutating func closes(_ bracket: UInt8) -> Bool {
        let comma = index
        skipWhiteSpace()
        if index < bytes.count, bytes[index] == bracket {
            index += 1
            return true
        }
        index = comma
        return false
    }

    /// The string starting at the opening quote when it is plain (ASCII, no escape, closed):
    /// its content's range, with the index moved past the closing quote. Otherwise nil, index unmoved.
    private mutating func plainASCIIString() -> Range<Int>? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        let (end, ascii) = plainRun(from: start)
        guard ascii, end < bytes.count, bytes[end] == UInt8(ascii: "\"") else { return nil }
        index = end + 1
        return start..<end
    }

    /// Where the run of bytes from `start` that needs no unescaping ends (at a quote, a backslash, a
    /// control character or the end), and whether the run is ASCII.
    private func plainRun(from start: Int) -> (end: Int, ascii: Bool) {
        var ascii = true
        let end = bytes.withUnsafeBufferPointer { buffer in
            var i = start
            var high: UInt8 = 0
            // Eight bytes at a time while none of them is a quote, a backslash or a control
            // character (the SWAR zero-byte test; a false alarm only sends that word to the byte loop).
            if let base = buffer.baseAddress {
                let raw = UnsafeRawPointer(base)
                let ones: UInt64 = 0x0101_0101_0101_0101
                let highs: UInt64 = 0x8080_8080_8080_8080
                var highWords: UInt64 = 0
                while i + 8 <= buffer.count {
                    let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    let quote = word ^ (ones &* 0x22)
                    let backslash = word ^ (ones &* 0x5C)
                    let special = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)
                    if special & highs != 0 { break }
                    highWords |= word
                    i += 8
                }
                if highWords & highs != 0 { high = 0x80 }
            }
            while i < buffer.count {
                let byte = buffer[i]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                high |= byte
                i += 1
            }
            ascii = high < 0x80
            return i
        }
        return (end, ascii)
    }

    /// A string starting at the opening quote. Plain runs are copied in one piece; UTF-8 is validated.
    private mutating func string() throws(Error) -> String {
        index += 1
        let start = index
        // Fast path: most strings have no escape; they become a String straight from the input, with
        // one UTF-8 validation and one copy.
        let (end, ascii) = plainRun(from: start)
        index = end
        if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
            let text: String
            if ascii {
                // ASCII is valid UTF-8: made from the raw buffer, skipping the generic validating path.
                text = bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[start..<end]), as: UTF8.self) }
            } else {
                guard let validated = String(validating: bytes[start..<end], as: UTF8.self) else {
                    throw fail("string is not valid UTF-8", at: start)
                }
                text = validated
            }
            index += 1
            return text
        }
        var out: [UInt8] = []
        var runStart = start
        while true {
            guard index < bytes.count else { throw fail("unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                out.append(contentsOf: bytes[runStart..<index])
                index += 1
                break
            }
            if byte < 0x20 { throw fail("control character in a string") }
            if byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            out.append(contentsOf: bytes[runStart..<index])
            index += 1
            guard index < bytes.count else { throw fail("unterminated escape") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw fail("unpaired surrogate")
                    }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw fail("unpaired surrogate")
                }
                // Every value here is a valid scalar: surrogates were paired or refused above.
                guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid escape") }
                out.append(contentsOf: Array(String(Character(unicode)).utf8))
            default:
                throw fail("invalid escape")
            }
            runStart = index
        }
        guard let text = String(validating: out, as: UTF8.self) else {
            throw fail("string is not valid UTF-8", at: start)
        }
        return text
    }

    private mutating func hex4() throws(Error) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("unterminated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[index]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: throw fail("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// RFC 8259's number grammar; an integer that fits `Int64` stays exact.
    private mutating func number() throws(Error) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number", at: start) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw fail("leading zero in a number", at: start) }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        var integral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid fraction", at: start) }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            integral = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid exponent", at: start) }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        // The slice is ASCII digits and signs only, checked above.
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if integral, let exact = Int64(text) { return .integer(exact) }
        guard let double = Double(text), double.isFinite else { throw fail("number out of range", at: start) }
        return .number(double)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
