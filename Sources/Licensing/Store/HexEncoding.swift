/// Lower-case hexadecimal, used for asset IDs and certificate hashes inside store keys and records.
public enum HexEncoding {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Lower-case hex of `bytes`; empty input gives "".
    public static func encode(_ bytes: [UInt8]) -> String {
        // Straight into the string's storage, and not generic (an unspecialized generic loop across
        // modules costs a witness call per byte): lease scripts hex-encode a few IDs per job.
        bytes.withUnsafeBufferPointer { input in
            String(unsafeUninitializedCapacity: input.count * 2) { out in write(UnsafeRawBufferPointer(input), into: out, at: 0) }
        }
    }

    /// Writes the lower-case hex of `input` into `out` from `offset`; returns the offset after it.
    /// `out` must have room for `2 * input.count` bytes there (callers size it exactly).
    public static func write(_ input: UnsafeRawBufferPointer, into out: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
        digits.withUnsafeBufferPointer { digits in
            var o = offset
            for byte in input {
                out[o] = digits[Int(byte >> 4)]
                out[o + 1] = digits[Int(byte & 0x0F)]
                o += 2
            }
            return o
        }
    }

    /// Appends the lower-case hex of `bytes` to `output` (Redis commands written in place).
    public static func append(_ bytes: [UInt8], to output: inout [UInt8]) {
        output.reserveCapacity(output.count + 2 * bytes.count)
        digits.withUnsafeBufferPointer { digits in
            for byte in bytes {
                output.append(digits[Int(byte >> 4)])
                output.append(digits[Int(byte & 0x0F)])
            }
        }
    }

    /// Lower-case hex of any byte sequence (copied to an array first).
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        encode(Array(bytes))
    }

    /// Decodes hex (either case). Returns nil for an odd length or a non-hex character.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
