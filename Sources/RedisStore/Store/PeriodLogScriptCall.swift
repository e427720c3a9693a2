import Licensing

/// Records one key period in a stream's period log (``PackagerKeyStore/recordPeriod(_:tenant:contentID:trackType:)``):
/// replaces the entry of the same order unless it is identical, trims the log to its newest
/// entries, renews its TTL, and answers `{changed (0 or 1), members oldest first}`.
struct PeriodLogScriptCall: RedisScriptCall {
    static let keyCount = 1

    /// The log (``RedisKeys/periodLog(_:contentID:trackType:)``).
    var logKey: RedisArgument
    /// The entry's order, its score.
    var order: Int64
    /// The entry as a member (``PackagerPeriodEntry/redisMember``).
    var member: String
    /// Entries kept.
    var keep: Int
    /// The log's TTL after this write (ms).
    var ttlMilliseconds: Int64

    func encode(into a: inout RedisScriptArguments) {
        a.key("log_key", logKey)
        a.argument("order", order)
        a.argument("member", member)
        a.argument("keep", keep)
        a.argument("ttl_ms", ttlMilliseconds)
    }

    static let script = RedisScript(
        """
        local log_key = KEYS[1]
        local order = ARGV[1]
        local member = ARGV[2]
        local keep = tonumber(ARGV[3])
        local ttl_ms = ARGV[4]
        local changed = 0
        local same = redis.call('ZRANGEBYSCORE', log_key, order, order)
        if #same ~= 1 or same[1] ~= member then
          redis.call('ZREMRANGEBYSCORE', log_key, order, order)
          redis.call('ZADD', log_key, order, member)
          changed = 1
        end
        local size = redis.call('ZCARD', log_key)
        if size > keep then redis.call('ZREMRANGEBYRANK', log_key, 0, size - keep - 1) end
        redis.call('PEXPIRE', log_key, ttl_ms)
        return {changed, redis.call('ZRANGE', log_key, 0, -1)}
        """)
}
