import Licensing

/// The renewal of a live lease slot, the one write a key-rotation storm is made of, as a script of
/// its own: five keys and six arguments instead of the lease script's eight and thirteen or more.
/// Redis builds a Lua string for every key and argument of every call, and in a storm that was a
/// third of the lease script's cost (docs/performance.md).
///
/// For a live slot that no newer stream ended, of a device already registered (when the tenant
/// keeps a registry), it writes exactly what ``LeaseScriptCall`` writes (the slot keys' lifetime
/// through the same ``LeaseScriptCall/keepSlotsFunction``) and answers the same `r:<expiry>`. In any
/// other case it writes nothing and answers nil, and the store sends the lease script for that
/// request instead: the slow path decides what the fast one cannot.
struct RenewalScriptCall: RedisScriptCall {
    static let keyCount = 5

    /// The account's key prefix (its hash tag): all five keys are this prefix and a suffix.
    var accountPrefix: [UInt8]
    /// Names the request's idempotency record (`req:<id>`).
    var requestID: String
    /// The worker's clock (ms since 1970).
    var nowMilliseconds: Int64
    var member: String
    /// The slot's expiry if renewed (ms since 1970).
    var expiresAtMilliseconds: Int64
    /// How long the request's result is kept for a replayed request ID (ms).
    var resultRetentionMilliseconds: Int64
    /// The device's HU when the tenant keeps a device registry (the device must be in it), else nil.
    var registeredDeviceID: [UInt8]?
    /// How long the device registry is kept after this write (ms).
    var accountRecordRetentionMilliseconds: Int64

    /// The call for `request`, or nil when the request is not a plain renewal: the session does not
    /// say it holds a slot, or the request also starts a rental or writes offline records or
    /// invalidated stream IDs (only the lease script does those).
    init?(_ request: LeaseRequest, member: String) {
        guard request.expectsLiveSlot, request.slot == .acquireOrRenew, request.rentalAssetID == nil,
            request.offlineRecords.isEmpty, request.invalidatedStreamIDs.isEmpty
        else { return nil }
        accountPrefix = RedisKeys.accountPrefix(request.tenant, account: request.account)
        requestID = request.requestID.value
        nowMilliseconds = request.nowMilliseconds
        self.member = member
        expiresAtMilliseconds = request.expiresAtMilliseconds
        resultRetentionMilliseconds = leaseIdempotencyWindowMilliseconds
        registeredDeviceID = request.deviceLimit == nil ? nil : request.deviceID
        accountRecordRetentionMilliseconds = RedisLicenseStore.accountRecordRetentionMilliseconds
    }

    var encodedCapacity: Int { 448 }

    func encode(into a: inout RedisScriptArguments) {
        a.key("slots_key", accountPrefix, RedisKeys.Account.slots)
        a.key("request_key", accountPrefix, RedisKeys.Account.leaseRequest, requestID)
        a.key("starts_key", accountPrefix, RedisKeys.Account.slotStarts)
        a.key("ended_key", accountPrefix, RedisKeys.Account.endedSlots)
        a.key("devices_key", accountPrefix, RedisKeys.Account.devices)
        a.argument("now_ms", nowMilliseconds)
        a.argument("member", member)
        a.argument("expiry_ms", expiresAtMilliseconds)
        a.argument("result_ttl_ms", resultRetentionMilliseconds)
        if let registeredDeviceID { a.argument("device", hex: registeredDeviceID) } else { a.argument("device", "") }
        a.argument("retention_ms", accountRecordRetentionMilliseconds)
    }

    /// Keys as ``LeaseScriptCall``'s first five. `device` is empty when the tenant keeps no registry.
    static let script = RedisScript(
        """
        local slots_key = KEYS[1]
        local request_key = KEYS[2]
        local starts_key = KEYS[3]
        local ended_key = KEYS[4]
        local devices_key = KEYS[5]
        local now_ms = ARGV[1]
        local member = ARGV[2]
        local expiry_ms = ARGV[3]
        local result_ttl_ms = ARGV[4]
        local device = ARGV[5]
        local retention_ms = ARGV[6]
        local stored = redis.call('GET', request_key)
        if stored then return stored end
        local now = tonumber(now_ms)
        \(LeaseScriptCall.keepSlotsFunction)
        local current = redis.call('ZSCORE', slots_key, member)
        if not current or tonumber(current) <= now then return false end
        if redis.call('SISMEMBER', ended_key, member) == 1 then return false end
        if device ~= '' and redis.call('SISMEMBER', devices_key, device) == 0 then return false end
        local expiry = expiry_ms
        if tonumber(current) > tonumber(expiry) then expiry = current end
        redis.call('ZADD', slots_key, expiry, member)
        keepSlots(expiry, false)
        if device ~= '' then redis.call('PEXPIRE', devices_key, retention_ms) end
        local result = 'r:' .. expiry
        redis.call('SET', request_key, result, 'PX', result_ttl_ms)
        return result
        """
    )
}
