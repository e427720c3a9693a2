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
        // Array headers past the element bound are refused before hiredis allocates them.
        if let reader = context.pointee.reader { HiredisReplyLimits.install(on: reader) }
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
                // A non-empty buffer has an address.
                guard let base = chars.baseAddress else { return REDIS_ERR }
                return redisAppendFormattedCommand(raw, base, chars.count)
            }
        }
        guard status == REDIS_OK else {
            throw RedisError(.connectionLost, "append: \(Self.errorString(raw))", isRetriable: true)
        }
    }

    /// The most bytes one ``readReply()`` takes from the socket before giving up on the reply:
    /// hiredis buffers a bulk string until all of it has arrived and builds an array element by
    /// element, so without a bound a server's `$9223372036854775807` or endless `*2147483647`
    /// decides how much memory a worker allocates. 64 MiB is far above any reply the store reads
    /// (its largest are `SCAN` pages of 1000 keys and the rotation index) and below what would
    /// hurt a worker.
    static let maximumReplyBytes = 64 << 20

    /// Flushes pending output if needed and reads the next reply, copied into a ``RedisValue``;
    /// the hiredis reply object is freed before returning. Error replies are returned as `.error`.
    ///
    /// This is `redisGetReply` (hiredis 0.14, blocking mode) with one addition: the bytes read for
    /// the reply are counted, and past `maximumReplyBytes` the read stops with `.unexpectedReply`
    /// (the caller drops the context, as after any failed read).
    func readReply() throws(RedisError) -> RedisValue {
        var reply: UnsafeMutableRawPointer?
        // A reply already buffered by an earlier read comes first.
        guard redisGetReplyFromReader(raw, &reply) == REDIS_OK else { throw Self.readFailure(raw, errno) }
        if reply == nil {
            var done: Int32 = 0
            repeat {
                guard redisBufferWrite(raw, &done) == REDIS_OK else { throw Self.readFailure(raw, errno) }
            } while done == 0
            var received = 0
            repeat {
                let before = raw.pointee.reader.pointee.len
                guard redisBufferRead(raw) == REDIS_OK else { throw Self.readFailure(raw, errno) }
                // The reader's buffer only grows while it is fed (it is trimmed when replies are taken).
                let after = raw.pointee.reader.pointee.len
                received += after > before ? after - before : 0
                guard received <= Self.maximumReplyBytes else {
                    throw RedisError(
                        .unexpectedReply, "a reply ran past \(Self.maximumReplyBytes) bytes without ending; the connection is dropped", isRetriable: true)
                }
                guard redisGetReplyFromReader(raw, &reply) == REDIS_OK else { throw Self.readFailure(raw, errno) }
            } while reply == nil
        }
        guard let reply else { throw Self.readFailure(raw, errno) }
        defer { freeReplyObject(reply) }
        return try RedisValue(hiredisReply: reply.assumingMemoryBound(to: redisReply.self))
    }

    /// The error for a failed write or read; `savedErrno` is `errno` right after the failing call.
    private static func readFailure(_ context: UnsafeMutablePointer<redisContext>, _ savedErrno: Int32) -> RedisError {
        let message = errorString(context)
        if context.pointee.err == REDIS_ERR_IO, savedErrno == EAGAIN || savedErrno == EWOULDBLOCK {
            return RedisError(.timeout, "no reply within the command timeout", isRetriable: true)
        }
        if context.pointee.err == REDIS_ERR_PROTOCOL {
            return RedisError(.unexpectedReply, "malformed reply: \(message)", isRetriable: true)
        }
        if context.pointee.err == REDIS_ERR_OOM {
            return RedisError(.unexpectedReply, "malformed reply: \(HiredisReplyLimits.refusal)", isRetriable: true)
        }
        return RedisError(.connectionLost, message.isEmpty ? "connection lost" : message, isRetriable: true)
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
