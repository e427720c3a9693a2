import Licensing

/// A key provider's set-if-absent write (``ContentKeyClaim``): the asset's policy with `SET NX`, the
/// key with `HSETNX` on its `wrapped` field (the IV and KEK ID follow only when that wins), then the
/// stored key read back. One script, so the three fields of one winner are never mixed with
/// another's, and both keys share the tenant's hash tag.
///
/// Answers `HMGET key wrapped iv kek`: three nulls when no key is stored and the claim had none.
struct ContentKeyClaimScriptCall: RedisScriptCall {
    static let keyCount = 2

    /// The asset's content key hash (``RedisKeys/contentKey(_:assetID:keyPeriod:)``, no period).
    var contentKeyKey: RedisArgument
    /// The asset's policy (``RedisKeys/policy(_:assetID:keyPeriod:)``).
    var policyKey: RedisArgument
    /// The candidate's wrapped key; empty for none (a wrapped key is never empty).
    var wrappedKey: [UInt8]
    /// The candidate's IV; empty for none.
    var iv: [UInt8]
    /// The candidate's KEK ID; empty for none.
    var keyEncryptionKeyID: String
    /// The policy document; empty for none (a document is never empty).
    var policy: [UInt8]

    init(_ claim: ContentKeyClaim) {
        contentKeyKey = RedisKeys.contentKey(claim.tenant, assetID: claim.assetID, keyPeriod: nil)
        policyKey = RedisKeys.policy(claim.tenant, assetID: claim.assetID)
        wrappedKey = claim.candidate?.wrappedKey ?? []
        iv = claim.candidate?.iv ?? []
        keyEncryptionKeyID = claim.candidate?.keyEncryptionKeyID.value ?? ""
        policy = claim.policy ?? []
    }

    var encodedCapacity: Int { 384 + policy.count }

    func encode(into a: inout RedisScriptArguments) {
        a.key("content_key", contentKeyKey)
        a.key("policy_key", policyKey)
        a.argument("wrapped", bytes: wrappedKey)
        a.argument("iv", bytes: iv)
        a.argument("kek", keyEncryptionKeyID)
        a.argument("policy", bytes: policy)
    }

    static let script = RedisScript(
        """
        local content_key = KEYS[1]
        local policy_key = KEYS[2]
        local wrapped = ARGV[1]
        local iv = ARGV[2]
        local kek = ARGV[3]
        local policy = ARGV[4]
        if policy ~= '' then redis.call('SET', policy_key, policy, 'NX') end
        if wrapped ~= '' and redis.call('HSETNX', content_key, 'wrapped', wrapped) == 1 then
          redis.call('HSET', content_key, 'iv', iv, 'kek', kek)
        end
        return redis.call('HMGET', content_key, 'wrapped', 'iv', 'kek')
        """)
}
