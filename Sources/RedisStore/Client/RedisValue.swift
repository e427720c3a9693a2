/// A Redis reply, copied out of hiredis's `redisReply` (which is freed at once).
public enum RedisValue: Sendable, Hashable {
    /// A bulk string: binary-safe bytes.
    case bulkString([UInt8])
    /// A status reply such as `OK` or `QUEUED`.
    case simpleString(String)
    case integer(Int64)
    case array([RedisValue])
    /// The nil bulk string or nil array.
    case null
    /// An error reply, e.g. `WRONGTYPE Operation against a key holding the wrong kind of value`.
    /// Returned as a value only inside pipelines; `send` throws it as a ``RedisError``.
    case error(String)

    /// The bytes of a bulk or simple string; nil for other kinds.
    package var bytes: [UInt8]? {
        switch self {
        case .bulkString(let bytes): bytes
        case .simpleString(let text): Array(text.utf8)
        default: nil
        }
    }

    /// A bulk or simple string decoded as UTF-8 (invalid sequences repaired); nil for other kinds.
    package var string: String? {
        switch self {
        case .bulkString(let bytes): String(decoding: bytes, as: UTF8.self)
        case .simpleString(let text): text
        default: nil
        }
    }

    /// An integer reply, or a string reply holding a decimal integer; nil otherwise.
    package var integerValue: Int64? {
        switch self {
        case .integer(let value): value
        case .bulkString, .simpleString: string.flatMap { Int64($0) }
        default: nil
        }
    }

    /// The elements of an array reply; nil for other kinds (including `.null`).
    package var arrayValue: [RedisValue]? {
        if case .array(let values) = self { values } else { nil }
    }

    package var isNull: Bool { self == .null }
}
