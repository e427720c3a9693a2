/// A content key identifier: 16 bytes, written in CPIX as a UUID (`8-4-4-4-12` hexadecimal digits,
/// either case: the CPIX XSD's pattern for `ContentKey@kid`).
package struct KID: Hashable, Sendable, CustomStringConvertible {
    /// The 16 bytes, in the order the UUID text writes them.
    package let bytes: [UInt8]

    /// Nil unless `bytes` has exactly 16 bytes.
    package init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// A constant written in the source, 16 bytes by construction.
    init(constant bytes: [UInt8]) {
        precondition(bytes.count == 16, "a KID constant must have 16 bytes")
        self.bytes = bytes
    }

    /// Nil unless `text` is a UUID in the `8-4-4-4-12` form, hyphens included (no braces, no URN).
    package init?(uuid text: String) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        var high: UInt8?
        for (index, char) in utf8.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard char == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let nibble = Self.nibble(char) else { return nil }
            if let h = high {
                bytes.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        self.bytes = bytes
    }

    /// Lower-case UUID text, `8-4-4-4-12`.
    package var description: String {
        let hex = bytes.map { byte -> String in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }

    private static func nibble(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): char - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
