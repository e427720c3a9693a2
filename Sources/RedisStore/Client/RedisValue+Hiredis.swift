internal import CHiredis

extension RedisValue {
    /// How many arrays deep a reply may nest. hiredis 0.14 itself refuses more than 8 (a protocol
    /// error before any reply object exists); hiredis 1.x grows its stack without a bound, so the
    /// copy checks too instead of recursing as deep as a server likes.
    package static let maximumNesting = 8

    /// Copies a hiredis reply object, which the caller still owns and frees.
    ///
    /// The only pointer arithmetic is `element[0..<elements]`: hiredis allocates exactly `elements`
    /// entries (none for an empty array, when `element` may be null), and its reader refuses an
    /// array length below -1 or above `INT_MAX` before making the object (tested in
    /// `MalformedRESPTests`). The copy still reads the count as a signed `Int` and refuses a
    /// negative one, so a reader without those checks fails here instead of trapping in a range.
    ///
    /// - Throws: `.unexpectedReply` for an array nested deeper than `maximumNesting`, a negative
    ///   element count, an array without its element vector, or a reply type this client does not
    ///   know (RESP3 types from a newer hiredis: the client speaks RESP2 and never asks for them).
    init(hiredisReply reply: UnsafePointer<redisReply>, maximumNesting: Int = RedisValue.maximumNesting) throws(RedisError) {
        self = try Self.copy(reply, depth: 0, maximumNesting: maximumNesting)
    }

    private static func copy(_ reply: UnsafePointer<redisReply>, depth: Int, maximumNesting: Int) throws(RedisError) -> RedisValue {
        let r = reply.pointee
        switch r.type {
        case REDIS_REPLY_STRING:
            return .bulkString(try bytes(r.str, r.len))
        case REDIS_REPLY_STATUS:
            return .simpleString(String(decoding: try bytes(r.str, r.len), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            return .error(String(decoding: try bytes(r.str, r.len), as: UTF8.self))
        case REDIS_REPLY_INTEGER:
            return .integer(Int64(r.integer))
        case REDIS_REPLY_NIL:
            return .null
        case REDIS_REPLY_ARRAY:
            guard depth < maximumNesting else {
                throw malformed("an array nested deeper than \(maximumNesting) levels")
            }
            // size_t arrives as Int: a count above Int.max would read as negative.
            let count = r.elements
            guard count >= 0 else { throw malformed("an array with a negative element count (\(count))") }
            if count == 0 { return .array([]) }
            guard let elements = r.element else { throw malformed("an array of \(count) elements without its elements") }
            var values = [RedisValue]()
            values.reserveCapacity(count)
            for index in 0..<count {
                if let element = elements[index] {
                    values.append(try copy(element, depth: depth + 1, maximumNesting: maximumNesting))
                } else {
                    values.append(.null)
                }
            }
            return .array(values)
        default:
            throw malformed("a reply of type \(r.type), which this client does not read")
        }
    }

    private static func bytes(_ pointer: UnsafeMutablePointer<CChar>?, _ length: Int) throws(RedisError) -> [UInt8] {
        guard length > 0 else {
            guard length == 0 else { throw malformed("a string with a negative length (\(length))") }
            return []
        }
        guard let pointer else { throw malformed("a string of \(length) bytes without its bytes") }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    private static func malformed(_ what: String) -> RedisError {
        RedisError(.unexpectedReply, "hiredis handed over \(what)", isRetriable: true)
    }
}
