/// Lowercase hex for trace and span IDs, without Foundation: every span pays for it once or twice.
/// Not `Licensing.HexEncoding`: that one accepts uppercase, which a `traceparent` must refuse, and
/// goes through byte arrays where an ID here is one or two integers.
enum HexDigits {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Up to 16 lowercase hex digits as a big-endian integer; nil on any other character (uppercase
    /// included, as `traceparent` requires lowercase) or more than 16 digits.
    static func uint64(_ hex: some Collection<UInt8>) -> UInt64? {
        guard hex.count <= 16 else { return nil }
        var value: UInt64 = 0
        for byte in hex {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }

    /// Exactly 16 lowercase hex digits, zero-padded.
    static func string(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            for index in 0..<16 {
                buffer[index] = digits[Int((value >> UInt64(60 - 4 * index)) & 0xF)]
            }
            return 16
        }
    }
}
