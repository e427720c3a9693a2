/// One argument of a Redis command: binary-safe bytes, sent with its length (never NUL-terminated).
public struct RedisArgument: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, CustomStringConvertible {
    public var bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public init(_ string: String) { self.bytes = Array(string.utf8) }
    public init<Integer: BinaryInteger>(_ value: Integer) { self.bytes = Array(String(value).utf8) }
    public init(stringLiteral value: String) { self.init(value) }
    public init(integerLiteral value: Int) { self.init(value) }

    /// The argument as text if it is short printable ASCII, else its length only (arguments may be
    /// key material or passwords, so never print them whole).
    public var description: String {
        if bytes.count <= 32, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        return "<\(bytes.count) bytes>"
    }
}
