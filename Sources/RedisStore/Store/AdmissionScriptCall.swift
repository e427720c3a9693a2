/// A job's admission when its tenant has a rate limit: the job's stored reply if one exists
/// (answered `{1, reply}`, nothing counted), else the account's counter for this rate window after
/// `INCR` (answered `{0, count}`, the TTL set on the window's first job).
struct AdmissionScriptCall: RedisScriptCall {
    static let keyCount = 2

    /// The job's stored reply (``RedisKeys/reply(_:account:jobID:)``).
    var replyKey: RedisArgument
    /// The account's counter for this window (``RedisKeys/rateCounter(_:account:window:)``).
    var counterKey: RedisArgument
    /// How long the counter lives after the window's first job (ms).
    var counterTTLMilliseconds: Int64

    func encode(into a: inout RedisScriptArguments) {
        a.key("reply_key", replyKey)
        a.key("counter_key", counterKey)
        a.argument("counter_ttl_ms", counterTTLMilliseconds)
    }

    static let script = RedisScript(
        """
        local reply_key = KEYS[1]
        local counter_key = KEYS[2]
        local counter_ttl_ms = ARGV[1]
        local stored = redis.call('GET', reply_key)
        if stored then return {1, stored} end
        local n = redis.call('INCR', counter_key)
        if n == 1 then redis.call('PEXPIRE', counter_key, counter_ttl_ms) end
        return {0, n}
        """)
}
