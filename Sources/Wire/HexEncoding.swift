/// Hexadecimal, the project's one codec for it: store keys and records (lower case), Apple's JSON
/// interface (upper case), key files and command-line values (either case, white space allowed).
package enum HexEncoding {
    private static let lower = Array("0123456789abcdef".utf8)
    private static let upper = Array("0123456789ABCDEF".utf8)

    /// Hex of `bytes`, two digits a byte; empty input gives "".
    package static func encode(_ bytes: [UInt8], uppercase: Bool = false) -> String {
        // Straight into the string's storage, and not generic (an unspecialized generic loop across
        // modules costs a witness call per byte): lease scripts hex-encode a few IDs per job.
        bytes.withUnsafeBufferPointer { input in
            String(unsafeUninitializedCapacity: input.count * 2) { out in
                write(UnsafeRawBufferPointer(input), into: out, at: 0, uppercase: uppercase)
            }
        }
    }

    /// Hex of any byte sequence (copied to an array first).
    package static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> String {
        encode(Array(bytes), uppercase: uppercase)
    }

    /// Writes the hex of `input` into `out` from `offset`; returns the offset after it. `out` must
    /// have room for `2 * input.count` bytes there (callers size it exactly).
    package static func write(
        _ input: UnsafeRawBufferPointer, into out: UnsafeMutableBufferPointer<UInt8>, at offset: Int,
        uppercase: Bool = false
    ) -> Int {
        (uppercase ? upper : lower).withUnsafeBufferPointer { digits in
            var o = offset
            for byte in input {
                out[o] = digits[Int(byte >> 4)]
                out[o + 1] = digits[Int(byte & 0x0F)]
                o += 2
            }
            return o
        }
    }

    /// Appends the hex of `bytes` to `output` (Redis commands and JSON written in place).
    package static func append(_ bytes: [UInt8], to output: inout [UInt8], uppercase: Bool = false) {
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: 2 * bytes.count))
        output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBytes { _ = write($0, into: out, at: start, uppercase: uppercase) }
        }
    }

    /// Decodes hex digits (either case). Nil for an odd number of digits or any other character,
    /// except that with `allowingWhitespace` spaces, tabs and line breaks between digits are skipped
    /// (key files end in a newline; people paste keys in groups).
    package static func decode(_ text: some StringProtocol, allowingWhitespace: Bool = false) -> [UInt8]? {
        // On the UTF-8 bytes in place: through the generic view, every byte was a protocol witness call.
        text.utf8.withContiguousStorageIfAvailable { decode($0, allowingWhitespace: allowingWhitespace) }
            ?? Array(text.utf8).withUnsafeBufferPointer { decode($0, allowingWhitespace: allowingWhitespace) }
    }

    /// Decodes hex digits held as UTF-8 bytes, with the rules of ``decode(_:allowingWhitespace:)``;
    /// for secrets kept out of `String`s, whose storage cannot be wiped.
    package static func decode(utf8 bytes: ArraySlice<UInt8>, allowingWhitespace: Bool = false) -> [UInt8]? {
        bytes.withUnsafeBufferPointer { decode($0, allowingWhitespace: allowingWhitespace) }
    }

    private static func decode(_ utf8: UnsafeBufferPointer<UInt8>, allowingWhitespace: Bool) -> [UInt8]? {
        var out: [UInt8] = []
        // Room for every digit pair up front: a 16-byte key grew the array five times.
        out.reserveCapacity(utf8.count / 2)
        var high: UInt8?
        for c in utf8 {
            guard let value = nibble(c) else {
                if allowingWhitespace, c == UInt8(ascii: " ") || c == UInt8(ascii: "\n") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\r") {
                    continue
                }
                return nil
            }
            if let h = high {
                out.append(h << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return high == nil ? out : nil
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

extension Collection where Element == UInt8 {
    /// Lower-case hex, two digits a byte (``HexEncoding``).
    package var hexString: String { HexEncoding.encode(self) }
}

extension Array where Element == UInt8 {
    /// Parses hex, upper or lower case, white space allowed between digits (``HexEncoding``); nil
    /// for anything else.
    package init?(hexString: some StringProtocol) {
        guard let bytes = HexEncoding.decode(hexString, allowingWhitespace: true) else { return nil }
        self = bytes
    }
}
