import Licensing

extension RedisLicenseStore {
    /// The slot keys' lifetime rule, shared by the lease and renewal scripts (KEYS [1] slot ZSET,
    /// [3] slot starts, [4] ended set; `now` a local defined before it): `keepSlots(expiry, always, absent)`
    /// pushes the three keys' TTL to twice the need when `PTTL` no longer covers the expiry plus a
    /// minute, or sets it anyway when `always` (a new slot aligns them); `absent` says the slot ZSET
    /// did not exist, so there is no TTL to ask for, and any start or ended member left is stale
    /// (both only ever name slot members): the starts and the ended set are deleted rather than
    /// kept alive, since the account's first slot records no start.
    static let keepSlotsFunction = """
        local function keepSlots(expiry, always, absent)
          local need = math.max(1, tonumber(expiry) - now) + 60000
          local ttl = absent and -2 or redis.call('PTTL', KEYS[1])
          if ttl < need then ttl = 2 * need elseif not always then return end
          redis.call('PEXPIRE', KEYS[1], ttl)
          if absent then redis.call('DEL', KEYS[3], KEYS[4]) return end
          redis.call('PEXPIRE', KEYS[3], ttl)
          redis.call('PEXPIRE', KEYS[4], ttl)
        end
        """

    /// One license's per-account side effects, atomically, idempotent per request ID: the device
    /// registry, the lease slot (take, renew, hold, or end the oldest when full), and, only when
    /// neither refused, the rental start, offline records and invalidated stream IDs.
    ///
    /// KEYS (one hash tag, the account's): [1] slot ZSET (score = expiry ms), [2] the request's
    /// idempotency record, [3] slot start HASH (member -> first start ms, for end-oldest), [4] ended
    /// SET (members ended by a newer stream), [5] device SET (HU hex), [6] rental start HASH (asset
    /// hex -> ms), [7] offline record HASH (stream ID hex -> JSON), [8] invalidated stream ID SET.
    /// ARGV: [1] now (ms, the worker's clock), [2] slot member, [3] expiry if granted or renewed (ms),
    /// [4] the account's stream limit, [5] how long to keep the result (ms), [6] slot mode `a`
    /// (acquire or renew) / `h` (hold) / `n` (none), [7] `1` to end the oldest stream when full,
    /// [8] device limit (empty: no registry), [9] device HU hex, [10] rental asset hex (empty: none),
    /// [11] N, then N (stream hex, record JSON) pairs, then M, then M invalidated stream hex IDs, then
    /// the retention (ms) of the account records [5]-[8]: each is kept that long after this script
    /// last wrote it (the device registry: after the last license under a device limit), so accounts
    /// that stop playing do not stay in Redis forever. Returns `LeaseResult.encoded`.
    ///
    /// Calls are kept few (a renewal of a live slot makes six, an account's first slot seven): the
    /// live count asks `ZCARD` first, and an account with no slot at all (`fresh`: no slot ZSET) has
    /// nothing to sweep, count or `PTTL`, and writes no start for its first slot. A member without a
    /// start reads as started at 0: the first member of a slot set started no later than any member
    /// added while it lives, so end-oldest picks it first, and on a tie (two first streams in the
    /// same millisecond) it is the one ended, as ``InMemoryLicenseStore`` does too. A start is a new
    /// key, the dearest write of a join (14 → 11 µs per first slot, docs/performance.md); expired slots are only swept when
    /// the live count is needed (a new slot or a refusal; a renewal treats an expired score as no
    /// slot), and the slot keys' TTL is only pushed out when `PTTL` says it no longer covers the
    /// expiry just written, then to twice that need, so most renewals leave it alone. The slot
    /// keys therefore live at least a minute and at most about twice the lease past the last write.
    /// Times are passed in, never read from the server, so a test clock controls expiry. TTLs are
    /// relative (PEXPIRE/PX), so a skew between the worker's and Redis's clocks cannot delete keys.
    /// Scores stay strings where possible: Lua 5.1 prints large numbers as 1.7e+12.
    static let leaseScript = RedisScript(
        """
        local stored = redis.call('GET', KEYS[2])
        if stored then return stored end
        local now = tonumber(ARGV[1])
        local member = ARGV[2]
        local limit = tonumber(ARGV[4])
        local function finish(r)
          redis.call('SET', KEYS[2], r, 'PX', ARGV[5])
          return r
        end
        local purged = false
        local function purge()
          if purged then return 0 end
          purged = true
          local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
          if #gone > 0 then
            redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
            redis.call('HDEL', KEYS[3], unpack(gone))
            redis.call('SREM', KEYS[4], unpack(gone))
          end
          return #gone
        end
        \(keepSlotsFunction)
        local register = false
        if ARGV[8] ~= '' and redis.call('SISMEMBER', KEYS[5], ARGV[9]) == 0 then
          local devices = redis.call('SCARD', KEYS[5])
          if devices >= tonumber(ARGV[8]) then
            return finish('x:deviceLimitReached:' .. devices .. ':' .. ARGV[8])
          end
          register = true
        end
        local fresh = false
        local function live()
          local slots = redis.call('ZCARD', KEYS[1])
          if slots == 0 then fresh = true return 0 end
          local gone = purge()
          return slots - gone - redis.call('SCARD', KEYS[4])
        end
        local current = redis.call('ZSCORE', KEYS[1], member)
        if current and tonumber(current) <= now then current = nil end
        local ended = current and redis.call('SISMEMBER', KEYS[4], member) == 1
        local result
        if ARGV[6] == 'n' then
          result = 'n'
        elseif ARGV[6] == 'h' then
          if not current then return finish('x:noLiveSlot:' .. live() .. ':' .. ARGV[4]) end
          if ended then return finish('x:streamEnded:' .. live() .. ':' .. ARGV[4]) end
          result = 'h:' .. current
        elseif current then
          if ended then return finish('x:streamEnded:' .. live() .. ':' .. ARGV[4]) end
          local expiry = ARGV[3]
          if tonumber(current) > tonumber(ARGV[3]) then expiry = current end
          redis.call('ZADD', KEYS[1], expiry, member)
          keepSlots(expiry, false)
          result = 'r:' .. expiry
        elseif live() < limit then
          redis.call('ZADD', KEYS[1], ARGV[3], member)
          if not fresh then redis.call('HSET', KEYS[3], member, ARGV[1]) end
          keepSlots(ARGV[3], true, fresh)
          result = 'g:' .. ARGV[3]
        elseif ARGV[7] == '1' then
          purge()
          local all = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
          local best, bestStart, bestExpiry
          for i = 1, #all, 2 do
            local m = all[i]
            if redis.call('SISMEMBER', KEYS[4], m) == 0 then
              local s = tonumber(redis.call('HGET', KEYS[3], m) or '0')
              local e = tonumber(all[i + 1])
              if not best or s < bestStart or (s == bestStart and (e < bestExpiry or (e == bestExpiry and m < best))) then
                best, bestStart, bestExpiry = m, s, e
              end
            end
          end
          if not best then return finish('x:tooManyStreams:' .. live() .. ':' .. ARGV[4]) end
          redis.call('SADD', KEYS[4], best)
          redis.call('ZADD', KEYS[1], ARGV[3], member)
          redis.call('HSET', KEYS[3], member, ARGV[1])
          keepSlots(ARGV[3], true)
          result = 'g:' .. ARGV[3] .. ':' .. best
        else
          return finish('x:tooManyStreams:' .. live() .. ':' .. ARGV[4])
        end
        local keep = ARGV[12 + 2 * tonumber(ARGV[11]) + 1 + tonumber(ARGV[12 + 2 * tonumber(ARGV[11])])]
        if register then redis.call('SADD', KEYS[5], ARGV[9]) end
        if ARGV[8] ~= '' then redis.call('PEXPIRE', KEYS[5], keep) end
        if ARGV[10] ~= '' then
          redis.call('HSETNX', KEYS[6], ARGV[10], ARGV[1])
          redis.call('PEXPIRE', KEYS[6], keep)
        end
        local i = 12
        for _ = 1, tonumber(ARGV[11]) do
          redis.call('HSET', KEYS[7], ARGV[i], ARGV[i + 1])
          i = i + 2
        end
        if tonumber(ARGV[11]) > 0 then redis.call('PEXPIRE', KEYS[7], keep) end
        local invalidated = tonumber(ARGV[i])
        i = i + 1
        for _ = 1, invalidated do
          redis.call('SADD', KEYS[8], ARGV[i])
          i = i + 1
        end
        if invalidated > 0 then redis.call('PEXPIRE', KEYS[8], keep) end
        return finish(result)
        """
    )

    /// The lease script call for one request, written straight into its wire form: the eight
    /// account keys from one shared prefix, then ARGV as the script above reads it.
    static func leaseCommand(_ request: LeaseRequest, member: String? = nil) -> RedisCommand {
        let prefix = RedisKeys.accountPrefix(request.tenant, account: request.account)
        var e = RedisCommandEncoder.script(keyCount: 8, capacity: 640 + 96 * request.offlineRecords.count + 48 * request.invalidatedStreamIDs.count)
        e.append(prefix, RedisKeys.Account.slots)
        e.append(prefix, RedisKeys.Account.leaseRequest, request.requestID.value)
        e.append(prefix, RedisKeys.Account.slotStarts)
        e.append(prefix, RedisKeys.Account.endedSlots)
        e.append(prefix, RedisKeys.Account.devices)
        e.append(prefix, RedisKeys.Account.rentals)
        e.append(prefix, RedisKeys.Account.offline)
        e.append(prefix, RedisKeys.Account.invalidated)
        e.append(request.nowMilliseconds)
        e.append(member ?? request.slotMember)
        e.append(request.expiresAtMilliseconds)
        e.append(request.maxConcurrentStreams)
        e.append(leaseIdempotencyWindowMilliseconds)
        e.append(request.slot == .none ? "n" : request.slot == .hold ? "h" : "a")
        e.append(request.endOldestWhenFull ? "1" : "0")
        if let limit = request.deviceLimit { e.append(limit) } else { e.append("") }
        e.append(hex: request.deviceID)
        if let asset = request.rentalAssetID { e.append(hex: asset) } else { e.append("") }
        e.append(request.offlineRecords.count)
        for record in request.offlineRecords {
            e.append(hex: record.streamID)
            e.append(bytes: record.jsonBytes())
        }
        e.append(request.invalidatedStreamIDs.count)
        for streamID in request.invalidatedStreamIDs { e.append(hex: streamID) }
        e.append(accountRecordRetentionMilliseconds)
        return .evalScript(leaseScript, encoded: e)
    }
}
