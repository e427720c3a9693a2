/// Standard base64 (RFC 4648, section 4, padded) straight between bytes and text, without Foundation.
///
/// Every job carries its SPC and every reply its CKC in base64, a few kilobytes each way per
/// license; `Data(base64Encoded:)` and `base64EncodedString()` go through `Data` and extra copies
/// and cost several times more. Decoding is as strict as the job schema: the standard alphabet,
/// padding required, `=` only at the end, no white space. Like Foundation, non-zero bits in the last
/// symbol before the padding are ignored rather than refused.
public enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Symbol value per byte; 0xFF for bytes outside the alphabet (padding included).
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in alphabet.enumerated() { table[Int(symbol)] = UInt8(value) }
        return table
    }()

    /// The padded base64 text of `bytes`.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let count = bytes.count
        let length = (count + 2) / 3 * 4
        if length == 0 { return "" }
        if let text = bytes.withContiguousStorageIfAvailable({ encode($0, length: length) }) { return text }
        return Array(bytes).withUnsafeBufferPointer { encode($0, length: length) }
    }

    /// Appends the padded base64 of `bytes` to `output` (for writers that build a larger buffer).
    public static func append(_ bytes: [UInt8], to output: inout [UInt8]) {
        let length = (bytes.count + 2) / 3 * 4
        if length == 0 { return }
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: length))
        output.withUnsafeMutableBufferPointer { buffer in
            bytes.withUnsafeBufferPointer { input in
                _ = encode(input, into: UnsafeMutableBufferPointer(rebasing: buffer[start..<start + length]))
            }
        }
    }

    private static func encode(_ input: UnsafeBufferPointer<UInt8>, length: Int) -> String {
        String(unsafeUninitializedCapacity: length) { out in encode(input, into: out) }
    }

    /// Writes `(input.count + 2) / 3 * 4` symbols into `out`; returns how many.
    private static func encode(_ input: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        alphabet.withUnsafeBufferPointer { symbols in
            var i = 0, o = 0
            while i + 3 <= input.count {
                let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                out[o] = symbols[Int(n >> 18)]
                out[o + 1] = symbols[Int(n >> 12 & 0x3F)]
                out[o + 2] = symbols[Int(n >> 6 & 0x3F)]
                out[o + 3] = symbols[Int(n & 0x3F)]
                i += 3
                o += 4
            }
            let rest = input.count - i
            if rest > 0 {
                let n = UInt32(input[i]) << 16 | (rest == 2 ? UInt32(input[i + 1]) << 8 : 0)
                out[o] = symbols[Int(n >> 18)]
                out[o + 1] = symbols[Int(n >> 12 & 0x3F)]
                out[o + 2] = rest == 2 ? symbols[Int(n >> 6 & 0x3F)] : UInt8(ascii: "=")
                out[o + 3] = UInt8(ascii: "=")
                o += 4
            }
            return o
        }
    }

    /// The bytes of padded base64 `text`, or nil if it is not exactly that.
    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode($0) }
    }

    /// The bytes of padded base64 given as UTF-8 (or ASCII) bytes, or nil if they are not exactly that.
    public static func decode(_ utf8: some Collection<UInt8>) -> [UInt8]? {
        if let result = utf8.withContiguousStorageIfAvailable({ decode($0) }) { return result }
        return Array(utf8).withUnsafeBufferPointer { decode($0) }
    }

    private static func decode(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = input.count
        if count == 0 { return [] }
        guard count % 4 == 0 else { return nil }
        let padding = input[count - 1] == UInt8(ascii: "=") ? (input[count - 2] == UInt8(ascii: "=") ? 2 : 1) : 0
        let length = count / 4 * 3 - padding
        var valid = true
        let out = [UInt8](unsafeUninitializedCapacity: length) { out, written in
            values.withUnsafeBufferPointer { table in
                var i = 0, o = 0
                // Every full group but the last; the last may carry padding.
                while i + 4 < count {
                    let a = table[Int(input[i])], b = table[Int(input[i + 1])], c = table[Int(input[i + 2])], d = table[Int(input[i + 3])]
                    if (a | b | c | d) & 0xC0 != 0 { valid = false; break }
                    let n = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    out[o] = UInt8(truncatingIfNeeded: n >> 16)
                    out[o + 1] = UInt8(truncatingIfNeeded: n >> 8)
                    out[o + 2] = UInt8(truncatingIfNeeded: n)
                    i += 4
                    o += 3
                }
                if valid {
                    let a = table[Int(input[i])], b = table[Int(input[i + 1])]
                    let c = padding == 2 ? 0 : table[Int(input[i + 2])]
                    let d = padding >= 1 ? 0 : table[Int(input[i + 3])]
                    if (a | b | c | d) & 0xC0 != 0 {
                        valid = false
                    } else {
                        let n = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                        out[o] = UInt8(truncatingIfNeeded: n >> 16)
                        if padding < 2 { out[o + 1] = UInt8(truncatingIfNeeded: n >> 8) }
                        if padding < 1 { out[o + 2] = UInt8(truncatingIfNeeded: n) }
                        o += 3 - padding
                    }
                }
                // Bytes are plain integers: a partial write on failure leaves nothing to deinitialize.
                written = valid ? o : 0
            }
        }
        return valid ? out : nil
    }
}
