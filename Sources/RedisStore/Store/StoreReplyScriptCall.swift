/// A job's reply stored unless another worker stored one first: answers nil when stored, else the
/// bytes stored earlier (published instead, byte-identical). Only for servers before Redis 7.0;
/// newer ones get the same from `SET ... NX PX ... GET` without Lua.
struct StoreReplyScriptCall: RedisScriptCall {
    static let keyCount = 1

    /// The job's stored reply (``RedisKeys/reply(_:account:jobID:)``).
    var replyKey: RedisArgument
    /// The reply's stored form (``StoredAnswer``'s Redis value).
    var reply: [UInt8]
    /// How long the reply is kept (ms).
    var ttlMilliseconds: Int64

    var encodedCapacity: Int { reply.count + 256 }

    func encode(into a: inout RedisScriptArguments) {
        a.key("reply_key", replyKey)
        a.argument("reply", bytes: reply)
        a.argument("ttl_ms", ttlMilliseconds)
    }

    static let script = RedisScript(
        """
        local reply_key = KEYS[1]
        local reply = ARGV[1]
        local ttl_ms = ARGV[2]
        if redis.call('SET', reply_key, reply, 'NX', 'PX', ttl_ms) then return false end
        return redis.call('GET', reply_key)
        """)
}
