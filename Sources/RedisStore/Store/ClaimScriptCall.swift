/// An SPC's claim for the replay guard: answers 1 when the SPC is new or was claimed by this same
/// job ID (a redelivery), 0 for a replay.
struct ClaimScriptCall: RedisScriptCall {
    static let keyCount = 1

    /// The SPC's claim (``RedisKeys/spcClaim(_:transactionID:digest:)``).
    var claimKey: RedisArgument
    /// The claiming job's ID, stored as the claim's value.
    var jobID: String
    /// How long the claim lasts (ms).
    var windowMilliseconds: Int64

    func encode(into a: inout RedisScriptArguments) {
        a.key("claim_key", claimKey)
        a.argument("job_id", jobID)
        a.argument("window_ms", windowMilliseconds)
    }

    static let script = RedisScript(
        """
        local claim_key = KEYS[1]
        local job_id = ARGV[1]
        local window_ms = ARGV[2]
        if redis.call('SET', claim_key, job_id, 'NX', 'PX', window_ms) then return 1 end
        if redis.call('GET', claim_key) == job_id then return 1 end
        return 0
        """)
}
