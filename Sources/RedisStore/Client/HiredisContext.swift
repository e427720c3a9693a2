internal import CHiredis

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one owner of a hiredis `redisContext` (blocking mode).
///
/// Not `Sendable`: hiredis contexts are not thread-safe. A ``RedisConnection`` keeps its context on
/// its own serial queue, and every call here blocks that queue's thread, never the cooperative pool.
/// After any method throws a non-`serverError` error the context is unusable (hiredis sets `err`
/// for good, and replies may be out of step) and the owner must drop it.
final class HiredisContext {
    private let raw: UnsafeMutablePointer<redisContext>

    private init(raw: UnsafeMutablePointer<redisContext>) {
        self.raw = raw
    }

    deinit {
        redisFree(raw)
    }

    /// Connects over TCP with `timeout` for the connect (hiredis also applies it to reads and writes
    /// until ``setTimeout(_:)`` is called). Frees the half-made context on failure.
    static func connect(host: String, port: Int, timeout: Duration) throws(RedisError) -> HiredisContext {
        guard let port32 = Int32(exactly: port) else {
            throw RedisError(.invalidConfiguration, "port \(port) out of range", isRetriable: false)
        }
        guard let context = redisConnectWithTimeout(host, port32, timeval(timeout)) else {
            throw RedisError(.connectionFailed, "hiredis could not allocate a context", isRetriable: true)
        }
        if context.pointee.err != 0 {
            let message = Self.errorString(context)
            redisFree(context)  // hiredis did not hand it to anyone: free it here.
            throw RedisError(.connectionFailed, "connect to \(host):\(port): \(message)", isRetriable: true)
        }
        return HiredisContext(raw: context)
    }

    /// Sets the read/write timeout for every later command (SO_RCVTIMEO/SO_SNDTIMEO).
    func setTimeout(_ timeout: Duration) throws(RedisError) {
        guard redisSetTimeout(raw, timeval(timeout)) == REDIS_OK else {
            throw RedisError(.connectionLost, "set timeout: \(Self.errorString(raw))", isRetriable: true)
        }
    }

    /// Appends one command to the output buffer; nothing is sent until a reply is read.
    /// Arguments are sent with explicit lengths, so any bytes are safe.
    func append(_ arguments: [RedisArgument]) throws(RedisError) {
        var wire: [UInt8] = []
        RedisCommand(arguments).write(into: &wire)
        try append(wire: wire)
    }

    /// Appends commands already in their wire form (RESP arrays of bulk strings, see
    /// ``RedisCommandEncoder``); hiredis copies the bytes into its output buffer as they are.
    func append(wire: [UInt8]) throws(RedisError) {
        if wire.isEmpty { return }
        let status = wire.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                // Non-nil: the buffer is not empty.
                redisAppendFormattedCommand(raw, chars.baseAddress!, chars.count)
            }
        }
        guard status == REDIS_OK else {
            throw RedisError(.connectionLost, "append: \(Self.errorString(raw))", isRetriable: true)
        }
    }

    /// Flushes pending output if needed and reads the next reply, copied into a ``RedisValue``;
    /// the hiredis reply object is freed before returning. Error replies are returned as `.error`.
    func readReply() throws(RedisError) -> RedisValue {
        var reply: UnsafeMutableRawPointer?
        let status = redisGetReply(raw, &reply)
        let savedErrno = errno
        guard status == REDIS_OK, let reply else {
            let message = Self.errorString(raw)
            if raw.pointee.err == REDIS_ERR_IO, savedErrno == EAGAIN || savedErrno == EWOULDBLOCK {
                throw RedisError(.timeout, "no reply within the command timeout", isRetriable: true)
            }
            throw RedisError(.connectionLost, message.isEmpty ? "connection lost" : message, isRetriable: true)
        }
        defer { freeReplyObject(reply) }
        return Self.copy(reply.assumingMemoryBound(to: redisReply.self))
    }

    private static func copy(_ reply: UnsafeMutablePointer<redisReply>) -> RedisValue {
        let r = reply.pointee
        switch r.type {
        case REDIS_REPLY_STRING:
            return .bulkString(bytes(r.str, r.len))
        case REDIS_REPLY_STATUS:
            return .simpleString(String(decoding: bytes(r.str, r.len), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            return .error(String(decoding: bytes(r.str, r.len), as: UTF8.self))
        case REDIS_REPLY_INTEGER:
            return .integer(Int64(r.integer))
        case REDIS_REPLY_ARRAY:
            var values = [RedisValue]()
            values.reserveCapacity(r.elements)
            for index in 0..<r.elements {
                if let element = r.element[index] {
                    values.append(copy(element))
                } else {
                    values.append(.null)
                }
            }
            return .array(values)
        default:  // REDIS_REPLY_NIL
            return .null
        }
    }

    private static func bytes(_ pointer: UnsafeMutablePointer<CChar>?, _ length: Int) -> [UInt8] {
        guard let pointer, length > 0 else { return [] }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    private static func errorString(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}

extension timeval {
    /// A timeval from a non-negative Duration (negative values become zero).
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 {
            self.init(tv_sec: 0, tv_usec: 0)
        } else {
            self.init(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        }
    }
}
