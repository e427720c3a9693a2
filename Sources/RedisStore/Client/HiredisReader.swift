internal import CHiredis

/// The one owner of a hiredis `redisReader`: the RESP parser every ``HiredisContext`` reads
/// replies with, here fed from bytes instead of a socket, so tests and the fuzz target
/// (FuzzTesting/Sources/FuzzRedisReply) run any byte stream through exactly the parser and the
/// copy into ``RedisValue`` that production replies take.
///
/// Not `Sendable`: a hiredis reader is not thread-safe; use one from one thread.
package final class HiredisReader {
    private let raw: UnsafeMutablePointer<redisReader>
    private let maximumNesting: Int
    /// The first protocol error; hiredis's reader is unusable after one, so it stays.
    private var failure: RedisError?

    /// Nil when hiredis cannot allocate a reader. `maximumNesting` below the default lets a test
    /// reach the copy's own nesting check, which hiredis 0.14's parser otherwise gets to first.
    package init?(maximumNesting: Int = RedisValue.maximumNesting) {
        guard let raw = redisReaderCreate() else { return nil }
        self.raw = raw
        self.maximumNesting = maximumNesting
        HiredisReplyLimits.install(on: raw)
    }

    deinit {
        redisReaderFree(raw)
    }

    /// Appends bytes to the reader's buffer; nothing is parsed until ``next()``.
    package func feed(_ bytes: [UInt8]) throws(RedisError) {
        if let failure { throw failure }
        if bytes.isEmpty { return }
        let status = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                redisReaderFeed(raw, chars.baseAddress, chars.count)
            }
        }
        guard status == REDIS_OK else { throw fail("could not buffer \(bytes.count) bytes") }
    }

    /// The next complete reply, or nil when the bytes so far hold no complete reply.
    /// - Throws: `.unexpectedReply` for a protocol error (hiredis's reason in the message) or a reply
    ///   the copy refuses; every later call throws the same error.
    package func next() throws(RedisError) -> RedisValue? {
        if let failure { throw failure }
        var reply: UnsafeMutableRawPointer?
        guard redisReaderGetReply(raw, &reply) == REDIS_OK else {
            throw fail(raw.pointee.err == REDIS_ERR_OOM ? HiredisReplyLimits.refusal : Self.errorString(raw))
        }
        guard let reply else { return nil }
        defer { freeReplyObject(reply) }
        do throws(RedisError) {
            return try RedisValue(hiredisReply: reply.assumingMemoryBound(to: redisReply.self), maximumNesting: maximumNesting)
        } catch {
            failure = error
            throw error
        }
    }

    /// Every complete reply in `bytes`, in order; bytes after the last complete reply are left
    /// unread (a truncated reply is not an error: a socket would wait for the rest).
    package static func replies(in bytes: [UInt8]) throws(RedisError) -> [RedisValue] {
        guard let reader = HiredisReader() else {
            throw RedisError(.unexpectedReply, "hiredis could not allocate a reader", isRetriable: true)
        }
        try reader.feed(bytes)
        var replies: [RedisValue] = []
        // Bounded: every reply takes at least three bytes ("+\r\n"), so at most count / 3 rounds.
        while let reply = try reader.next() { replies.append(reply) }
        return replies
    }

    private func fail(_ reason: String) -> RedisError {
        let error = RedisError(.unexpectedReply, "malformed reply: \(reason.isEmpty ? "protocol error" : reason)", isRetriable: true)
        failure = error
        return error
    }

    private static func errorString(_ reader: UnsafeMutablePointer<redisReader>) -> String {
        withUnsafeBytes(of: reader.pointee.errstr) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
