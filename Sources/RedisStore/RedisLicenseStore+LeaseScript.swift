extension RedisLicenseStore {
    /// Takes, renews or refuses one lease slot, atomically, idempotent per request ID.
    ///
    /// KEYS[1] the account's slot ZSET, KEYS[2] the request's idempotency record (same hash tag).
    /// ARGV[1] now (ms, the worker's clock), ARGV[2] slot member, ARGV[3] expiry if granted or
    /// renewed (ms), ARGV[4] the account's limit, ARGV[5] how long to keep the result (ms).
    /// Returns `LeaseResult.encoded`: `g:<ms>`, `r:<ms>` or `x:tooManyStreams:<active>:<limit>`.
    ///
    /// Times are passed in, never read from the server, so a test clock controls expiry. TTLs are
    /// relative (PEXPIRE/PX), so a skew between the worker's and Redis's clocks cannot delete keys.
    /// Scores stay strings where possible: Lua 5.1 prints large numbers as 1.7e+12.
    static let leaseScript = RedisScript(
        """
        local stored = redis.call('GET', KEYS[2])
        if stored then return stored end
        local now = tonumber(ARGV[1])
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
        local result
        local current = redis.call('ZSCORE', KEYS[1], ARGV[2])
        if current then
          local expiry = ARGV[3]
          if tonumber(current) > tonumber(ARGV[3]) then expiry = current end
          redis.call('ZADD', KEYS[1], expiry, ARGV[2])
          result = 'r:' .. expiry
        else
          local active = redis.call('ZCARD', KEYS[1])
          local limit = tonumber(ARGV[4])
          if active < limit then
            redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
            result = 'g:' .. ARGV[3]
          else
            result = 'x:tooManyStreams:' .. active .. ':' .. ARGV[4]
          end
        end
        local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
        if last[2] then
          redis.call('PEXPIRE', KEYS[1], math.max(1, tonumber(last[2]) - now) + 60000)
        end
        redis.call('SET', KEYS[2], result, 'PX', ARGV[5])
        return result
        """
    )
}
