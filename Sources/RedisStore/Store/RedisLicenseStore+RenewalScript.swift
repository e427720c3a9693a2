import Licensing

extension RedisLicenseStore {
    /// The renewal of a live lease slot, the one write a key-rotation storm is made of, as a script
    /// of its own: five keys and six arguments instead of the lease script's eight and thirteen or
    /// more. Redis builds a Lua string for every key and argument of every call, and in a storm that
    /// was a third of the lease script's cost (docs/performance.md).
    ///
    /// For a live slot that no newer stream ended, of a device already registered (when the tenant
    /// keeps a registry), it writes exactly what ``leaseScript`` writes (the slot keys' lifetime
    /// through the same ``keepSlotsFunction``) and answers the same `r:<expiry>`. In any other case it
    /// writes nothing and answers nil, and the store sends the lease script for that request instead:
    /// the slow path decides what the fast one cannot.
    ///
    /// KEYS (the account's hash tag): [1] slot ZSET, [2] the request's idempotency record, [3] slot
    /// start HASH, [4] ended SET, [5] device SET. ARGV: [1] now (ms), [2] slot member, [3] expiry if
    /// renewed (ms), [4] how long to keep the result (ms), [5] device HU hex, or empty when the
    /// tenant keeps no device registry, [6] the device registry's retention (ms).
    static let renewalScript = RedisScript(
        """
        local stored = redis.call('GET', KEYS[2])
        if stored then return stored end
        local now = tonumber(ARGV[1])
        \(keepSlotsFunction)
        local current = redis.call('ZSCORE', KEYS[1], ARGV[2])
        if not current or tonumber(current) <= now then return false end
        if redis.call('SISMEMBER', KEYS[4], ARGV[2]) == 1 then return false end
        if ARGV[5] ~= '' and redis.call('SISMEMBER', KEYS[5], ARGV[5]) == 0 then return false end
        local expiry = ARGV[3]
        if tonumber(current) > tonumber(expiry) then expiry = current end
        redis.call('ZADD', KEYS[1], expiry, ARGV[2])
        keepSlots(expiry, false)
        if ARGV[5] ~= '' then redis.call('PEXPIRE', KEYS[5], ARGV[6]) end
        local result = 'r:' .. expiry
        redis.call('SET', KEYS[2], result, 'PX', ARGV[4])
        return result
        """
    )

    /// The renewal script call for `request`, or nil when the request is not a plain renewal: the
    /// session does not say it holds a slot, or the request also starts a rental or writes offline
    /// records or invalidated stream IDs (only the lease script does those).
    static func renewalCommand(_ request: LeaseRequest, member: String) -> RedisCommand? {
        guard request.expectsLiveSlot, request.slot == .acquireOrRenew, request.rentalAssetID == nil,
            request.offlineRecords.isEmpty, request.invalidatedStreamIDs.isEmpty
        else { return nil }
        let prefix = RedisKeys.accountPrefix(request.tenant, account: request.account)
        var e = RedisCommandEncoder.script(keyCount: 5, capacity: 448)
        e.append(prefix, RedisKeys.Account.slots)
        e.append(prefix, RedisKeys.Account.leaseRequest, request.requestID.value)
        e.append(prefix, RedisKeys.Account.slotStarts)
        e.append(prefix, RedisKeys.Account.endedSlots)
        e.append(prefix, RedisKeys.Account.devices)
        e.append(request.nowMilliseconds)
        e.append(member)
        e.append(request.expiresAtMilliseconds)
        e.append(leaseIdempotencyWindowMilliseconds)
        if request.deviceLimit != nil { e.append(hex: request.deviceID) } else { e.append("") }
        e.append(accountRecordRetentionMilliseconds)
        return .evalScript(renewalScript, encoded: e)
    }
}
