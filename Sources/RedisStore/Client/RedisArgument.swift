/// One argument of a Redis command: binary-safe bytes, sent with its length (never NUL-terminated).
package struct RedisArgument: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, CustomStringConvertible {
    package var bytes: [UInt8]

    package init(_ bytes: [UInt8]) { self.bytes = bytes }
    package init(_ string: String) { self.bytes = Array(string.utf8) }
    package init<Integer: BinaryInteger>(_ value: Integer) { self.bytes = Array(String(value).utf8) }
    package init(stringLiteral value: String) { self.init(value) }
    package init(integerLiteral value: Int) { self.init(value) }

    /// Hashes the bytes as one block: the synthesized form hashes an array element by element,
    /// which showed up in profiles of the per-batch key deduplication.
    package func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    package static func == (lhs: RedisArgument, rhs: RedisArgument) -> Bool { lhs.bytes == rhs.bytes }

    /// The argument as text if it is short printable ASCII, else its length only (arguments may be
    /// key material or passwords, so never print them whole).
    package var description: String {
        if bytes.count <= 32, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        return "<\(bytes.count) bytes>"
    }
}
