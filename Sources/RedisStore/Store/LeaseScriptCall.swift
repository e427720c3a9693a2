import Licensing

/// One license's per-account side effects, atomically, idempotent per request ID: the device
/// registry, the lease slot (take, renew, hold, or end the oldest when full), and, only when
/// neither refused, the rental start, offline records and invalidated stream IDs. The script
/// answers ``LeaseResult/encoded``.
///
/// Calls are kept few (a renewal of a live slot makes six, an account's first slot seven): the
/// live count asks `ZCARD` first, and an account with no slot at all (`fresh`: no slot ZSET) has
/// nothing to sweep, count or `PTTL`, and writes no start for its first slot. A member without a
/// start reads as started at 0: the first member of a slot set started no later than any member
/// added while it lives, so end-oldest picks it first, and on a tie (two first streams in the
/// same millisecond) it is the one ended, as ``InMemoryLicenseStore`` does too. A start is a new
/// key, the dearest write of a join (14 → 11 µs per first slot, docs/performance.md); expired slots
/// are only swept when the live count is needed (a new slot or a refusal; a renewal treats an
/// expired score as no slot), and the slot keys' TTL is only pushed out when `PTTL` says it no
/// longer covers the expiry just written, then to twice that need, so most renewals leave it
/// alone. The slot keys therefore live at least a minute and at most about twice the lease past the
/// last write. Times are passed in, never read from the server, so a test clock controls expiry.
/// TTLs are relative (PEXPIRE/PX), so a skew between the worker's and Redis's clocks cannot delete
/// keys. Scores stay strings where possible: Lua 5.1 prints large numbers as 1.7e+12.
struct LeaseScriptCall: RedisScriptCall {
    static let keyCount = 8

    /// The account's key prefix (its hash tag): all eight keys are this prefix and a suffix.
    var accountPrefix: [UInt8]
    /// Names the request's idempotency record (`req:<id>`).
    var requestID: String
    /// The worker's clock (ms since 1970).
    var nowMilliseconds: Int64
    /// The slot's member name (``LeaseRequest/slotMember``).
    var member: String
    /// The slot's expiry if granted or renewed (ms since 1970).
    var expiresAtMilliseconds: Int64
    /// The account's concurrent stream limit.
    var streamLimit: Int
    /// How long the request's result is kept for a replayed request ID (ms).
    var resultRetentionMilliseconds: Int64
    var slot: LeaseRequest.SlotMode
    /// End the oldest stream when the account is full, instead of refusing.
    var endOldestWhenFull: Bool
    /// The tenant's device limit; nil when it keeps no device registry.
    var deviceLimit: Int?
    /// The device's HU.
    var deviceID: [UInt8]
    /// The asset whose rental starts now; nil for none.
    var rentalAssetID: [UInt8]?
    /// How long the account records (device registry, rentals, offline records, invalidated stream
    /// IDs) are kept after this script last wrote them (ms), so accounts that stop playing do not
    /// stay in Redis forever.
    var accountRecordRetentionMilliseconds: Int64
    var offlineRecords: [OfflineLicenseRecord]
    var invalidatedStreamIDs: [[UInt8]]

    init(_ request: LeaseRequest, member: String) {
        accountPrefix = RedisKeys.accountPrefix(request.tenant, account: request.account)
        requestID = request.requestID.value
        nowMilliseconds = request.nowMilliseconds
        self.member = member
        expiresAtMilliseconds = request.expiresAtMilliseconds
        streamLimit = request.maxConcurrentStreams
        resultRetentionMilliseconds = leaseIdempotencyWindowMilliseconds
        slot = request.slot
        endOldestWhenFull = request.endOldestWhenFull
        deviceLimit = request.deviceLimit
        deviceID = request.deviceID
        rentalAssetID = request.rentalAssetID
        accountRecordRetentionMilliseconds = RedisLicenseStore.accountRecordRetentionMilliseconds
        offlineRecords = request.offlineRecords
        invalidatedStreamIDs = request.invalidatedStreamIDs
    }

    var encodedCapacity: Int { 640 + 96 * offlineRecords.count + 48 * invalidatedStreamIDs.count }

    func encode(into a: inout RedisScriptArguments) {
        a.key("slots_key", accountPrefix, RedisKeys.Account.slots)
        a.key("request_key", accountPrefix, RedisKeys.Account.leaseRequest, requestID)
        a.key("starts_key", accountPrefix, RedisKeys.Account.slotStarts)
        a.key("ended_key", accountPrefix, RedisKeys.Account.endedSlots)
        a.key("devices_key", accountPrefix, RedisKeys.Account.devices)
        a.key("rentals_key", accountPrefix, RedisKeys.Account.rentals)
        a.key("offline_key", accountPrefix, RedisKeys.Account.offline)
        a.key("invalidated_key", accountPrefix, RedisKeys.Account.invalidated)
        a.argument("now_ms", nowMilliseconds)
        a.argument("member", member)
        a.argument("expiry_ms", expiresAtMilliseconds)
        a.argument("stream_limit", streamLimit)
        a.argument("result_ttl_ms", resultRetentionMilliseconds)
        a.argument("slot_mode", slot == .none ? "n" : slot == .hold ? "h" : "a")
        a.argument("end_oldest", endOldestWhenFull ? "1" : "0")
        if let deviceLimit { a.argument("device_limit", deviceLimit) } else { a.argument("device_limit", "") }
        a.argument("device", hex: deviceID)
        if let rentalAssetID { a.argument("rental_asset", hex: rentalAssetID) } else { a.argument("rental_asset", "") }
        a.argument("retention_ms", accountRecordRetentionMilliseconds)
        a.argument("offline_count", offlineRecords.count)
        a.argument("invalidated_count", invalidatedStreamIDs.count)
        a.beginTail()
        for record in offlineRecords {
            a.argument("offline_stream", hex: record.streamID)
            a.argument("offline_record", bytes: record.jsonBytes())
        }
        for streamID in invalidatedStreamIDs { a.argument("invalidated_stream", hex: streamID) }
    }

    /// The slot keys' lifetime rule, shared with ``RenewalScriptCall`` (whose header names the same
    /// `slots_key`, `starts_key`, `ended_key` and `now`): `keepSlots(expiry, always, absent)` pushes
    /// the three keys' TTL to twice the need when `PTTL` no longer covers the expiry plus a minute,
    /// or sets it anyway when `always` (a new slot aligns them); `absent` says the slot ZSET did not
    /// exist, so there is no TTL to ask for, and any start or ended member left is stale (both only
    /// ever name slot members): the starts and the ended set are deleted rather than kept alive,
    /// since the account's first slot records no start.
    static let keepSlotsFunction = """
        local function keepSlots(expiry, always, absent)
          local need = math.max(1, tonumber(expiry) - now) + 60000
          local ttl = absent and -2 or redis.call('PTTL', slots_key)
          if ttl < need then ttl = 2 * need elseif not always then return end
          redis.call('PEXPIRE', slots_key, ttl)
          if absent then redis.call('DEL', starts_key, ended_key) return end
          redis.call('PEXPIRE', starts_key, ttl)
          redis.call('PEXPIRE', ended_key, ttl)
        end
        """

    /// Keys: the slot ZSET (score = expiry ms), the request's idempotency record, slot starts (HASH
    /// member -> first start ms, for end-oldest), ended members (SET, ended by a newer stream),
    /// devices (SET of HU hex), rental starts (HASH asset hex -> ms), offline records (HASH stream
    /// ID hex -> JSON), invalidated stream IDs (SET). The tail, from `ARGV[tail]`: `offline_count`
    /// (stream ID hex, record JSON) pairs, then `invalidated_count` stream ID hex.
    static let script = RedisScript(
        """
        local slots_key = KEYS[1]
        local request_key = KEYS[2]
        local starts_key = KEYS[3]
        local ended_key = KEYS[4]
        local devices_key = KEYS[5]
        local rentals_key = KEYS[6]
        local offline_key = KEYS[7]
        local invalidated_key = KEYS[8]
        local now_ms = ARGV[1]
        local member = ARGV[2]
        local expiry_ms = ARGV[3]
        local stream_limit = ARGV[4]
        local result_ttl_ms = ARGV[5]
        local slot_mode = ARGV[6]
        local end_oldest = ARGV[7]
        local device_limit = ARGV[8]
        local device = ARGV[9]
        local rental_asset = ARGV[10]
        local retention_ms = ARGV[11]
        local offline_count = tonumber(ARGV[12])
        local invalidated_count = tonumber(ARGV[13])
        local tail = 14
        local stored = redis.call('GET', request_key)
        if stored then return stored end
        local now = tonumber(now_ms)
        local limit = tonumber(stream_limit)
        local function finish(r)
          redis.call('SET', request_key, r, 'PX', result_ttl_ms)
          return r
        end
        local purged = false
        local function purge()
          if purged then return 0 end
          purged = true
          local gone = redis.call('ZRANGEBYSCORE', slots_key, '-inf', now_ms)
          if #gone > 0 then
            redis.call('ZREMRANGEBYSCORE', slots_key, '-inf', now_ms)
            redis.call('HDEL', starts_key, unpack(gone))
            redis.call('SREM', ended_key, unpack(gone))
          end
          return #gone
        end
        \(keepSlotsFunction)
        local register = false
        if device_limit ~= '' and redis.call('SISMEMBER', devices_key, device) == 0 then
          local devices = redis.call('SCARD', devices_key)
          if devices >= tonumber(device_limit) then
            return finish('x:deviceLimitReached:' .. devices .. ':' .. device_limit)
          end
          register = true
        end
        local fresh = false
        local function live()
          local slots = redis.call('ZCARD', slots_key)
          if slots == 0 then fresh = true return 0 end
          local gone = purge()
          return slots - gone - redis.call('SCARD', ended_key)
        end
        local current = redis.call('ZSCORE', slots_key, member)
        if current and tonumber(current) <= now then current = nil end
        local ended = current and redis.call('SISMEMBER', ended_key, member) == 1
        local result
        if slot_mode == 'n' then
          result = 'n'
        elseif slot_mode == 'h' then
          if not current then return finish('x:noLiveSlot:' .. live() .. ':' .. stream_limit) end
          if ended then return finish('x:streamEnded:' .. live() .. ':' .. stream_limit) end
          result = 'h:' .. current
        elseif current then
          if ended then return finish('x:streamEnded:' .. live() .. ':' .. stream_limit) end
          local expiry = expiry_ms
          if tonumber(current) > tonumber(expiry_ms) then expiry = current end
          redis.call('ZADD', slots_key, expiry, member)
          keepSlots(expiry, false)
          result = 'r:' .. expiry
        elseif live() < limit then
          redis.call('ZADD', slots_key, expiry_ms, member)
          if not fresh then redis.call('HSET', starts_key, member, now_ms) end
          keepSlots(expiry_ms, true, fresh)
          result = 'g:' .. expiry_ms
        elseif end_oldest == '1' then
          purge()
          local all = redis.call('ZRANGE', slots_key, 0, -1, 'WITHSCORES')
          local best, bestStart, bestExpiry
          for i = 1, #all, 2 do
            local m = all[i]
            if redis.call('SISMEMBER', ended_key, m) == 0 then
              local s = tonumber(redis.call('HGET', starts_key, m) or '0')
              local e = tonumber(all[i + 1])
              if not best or s < bestStart or (s == bestStart and (e < bestExpiry or (e == bestExpiry and m < best))) then
                best, bestStart, bestExpiry = m, s, e
              end
            end
          end
          if not best then return finish('x:tooManyStreams:' .. live() .. ':' .. stream_limit) end
          redis.call('SADD', ended_key, best)
          redis.call('ZADD', slots_key, expiry_ms, member)
          redis.call('HSET', starts_key, member, now_ms)
          keepSlots(expiry_ms, true)
          result = 'g:' .. expiry_ms .. ':' .. best
        else
          return finish('x:tooManyStreams:' .. live() .. ':' .. stream_limit)
        end
        if register then redis.call('SADD', devices_key, device) end
        if device_limit ~= '' then redis.call('PEXPIRE', devices_key, retention_ms) end
        if rental_asset ~= '' then
          redis.call('HSETNX', rentals_key, rental_asset, now_ms)
          redis.call('PEXPIRE', rentals_key, retention_ms)
        end
        local i = tail
        for _ = 1, offline_count do
          redis.call('HSET', offline_key, ARGV[i], ARGV[i + 1])
          i = i + 2
        end
        if offline_count > 0 then redis.call('PEXPIRE', offline_key, retention_ms) end
        for _ = 1, invalidated_count do
          redis.call('SADD', invalidated_key, ARGV[i])
          i = i + 1
        end
        if invalidated_count > 0 then redis.call('PEXPIRE', invalidated_key, retention_ms) end
        return finish(result)
        """
    )
}
