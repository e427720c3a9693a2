import Licensing
import Wire

/// A command's arguments written straight into their wire form, RESP bulk strings
/// (`$<length>\r\n<bytes>\r\n`), in one growing buffer.
///
/// Why: a lease script call has two dozen arguments per job; building each as its own array and
/// letting hiredis format them again cost more CPU than Redis spent running the script. Hot paths
/// write keys and numbers here directly; ``RedisArgument`` arrays go through the same encoder.
package struct RedisCommandEncoder: Sendable {
    /// The bulk strings written so far, without the array header (`*<count>\r\n`).
    private(set) var bytes: [UInt8] = []
    /// How many arguments were written.
    private(set) var count = 0

    package init(capacity: Int = 128) {
        bytes.reserveCapacity(capacity)
    }

    /// Starts a script call's arguments: the key count, then the caller writes the keys and the
    /// arguments in order.
    package static func script(keyCount: Int, capacity: Int = 512) -> RedisCommandEncoder {
        var encoder = RedisCommandEncoder(capacity: capacity)
        encoder.append(keyCount)
        return encoder
    }

    package mutating func append(_ argument: RedisArgument) {
        append(bytes: argument.bytes)
    }

    package mutating func append(bytes content: [UInt8]) {
        header(length: content.count)
        bytes.append(contentsOf: content)
        trailer()
    }

    package mutating func append(_ string: String) {
        count += 1
        Self.writeBulk(string, into: &bytes)
    }

    /// A key made of a shared prefix (an account's hash tag), a fixed part and an optional variable
    /// tail (e.g. `...:slots`, `...:req:<request ID>`), with no intermediate string.
    package mutating func append(_ prefix: [UInt8], _ middle: StaticString, _ tail: String = "") {
        var tail = tail
        middle.withUTF8Buffer { middle in
            tail.withUTF8 { tail in
                header(length: prefix.count + middle.count + tail.count)
                bytes.append(contentsOf: prefix)
                bytes.append(contentsOf: middle)
                bytes.append(contentsOf: tail)
            }
        }
        trailer()
    }

    /// An integer in decimal, as Redis reads numbers. Signed types of at most 64 bits only, so the
    /// conversion below cannot trap (a `UInt64` above `Int64.max` would).
    package mutating func append<Integer: SignedInteger & FixedWidthInteger>(_ value: Integer) {
        let value = Int64(value)
        header(length: Self.decimalLength(value))
        writeDecimal(value)
        trailer()
    }

    /// Bytes as lower-case hex digits, the form the data model uses for device and asset IDs.
    package mutating func append(hex content: [UInt8]) {
        header(length: 2 * content.count)
        HexEncoding.append(content, to: &bytes)
        trailer()
    }

    /// Writes the whole command: the array header, then the two `leading` arguments when given
    /// (`EVALSHA <sha>`, `EVAL <source>`), then these arguments, straight into `output`.
    func write(into output: inout [UInt8], leading: (String, String)? = nil) {
        output.append(UInt8(ascii: "*"))
        Self.writeDecimal(Int64(count + (leading == nil ? 0 : 2)), into: &output)
        output.append(contentsOf: [0x0d, 0x0a])
        if let (first, second) = leading {
            Self.writeBulk(first, into: &output)
            Self.writeBulk(second, into: &output)
        }
        output.append(contentsOf: bytes)
    }

    private static func writeBulk(_ string: String, into output: inout [UInt8]) {
        var string = string
        string.withUTF8 { utf8 in
            output.append(UInt8(ascii: "$"))
            writeDecimal(Int64(utf8.count), into: &output)
            output.append(contentsOf: [0x0d, 0x0a])
            output.append(contentsOf: utf8)
            output.append(contentsOf: [0x0d, 0x0a])
        }
    }

    /// The `position`-th argument written (0 = the first), read back from the wire form; nil past
    /// the end. The cluster client reads a command's name and first key this way.
    func argument(at position: Int) -> ArraySlice<UInt8>? {
        guard position >= 0, position < count else { return nil }
        var index = bytes.startIndex
        var current = 0
        while index < bytes.endIndex, bytes[index] == UInt8(ascii: "$") {
            index += 1
            var length = 0
            while index < bytes.endIndex, bytes[index] != 0x0d {
                length = length * 10 + Int(bytes[index] &- UInt8(ascii: "0"))
                index += 1
            }
            let start = index + 2  // past "\r\n"
            let end = start + length
            guard end <= bytes.endIndex else { return nil }
            if current == position { return bytes[start..<end] }
            current += 1
            index = end + 2
        }
        return nil
    }

    private mutating func header(length: Int) {
        count += 1
        bytes.append(UInt8(ascii: "$"))
        writeDecimal(Int64(length))
        bytes.append(0x0d)
        bytes.append(0x0a)
    }

    private mutating func trailer() {
        bytes.append(0x0d)
        bytes.append(0x0a)
    }

    private mutating func writeDecimal(_ value: Int64) {
        Self.writeDecimal(value, into: &bytes)
    }

    static func writeDecimal(_ value: Int64, into output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        // Magnitude as UInt64, so Int64.min is written correctly.
        var magnitude = value.magnitude
        let length = decimalLength(value) - (value < 0 ? 1 : 0)
        let start = output.count
        output.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: length))
        var index = start + length - 1
        repeat {
            output[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
            index -= 1
        } while magnitude > 0
    }

    static func decimalLength(_ value: Int64) -> Int {
        var magnitude = value.magnitude
        var digits = 1
        while magnitude >= 10 {
            magnitude /= 10
            digits += 1
        }
        return digits + (value < 0 ? 1 : 0)
    }
}
