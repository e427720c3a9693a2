import Licensing
import Wire

/// Keys of the job guards (schemas/redis-data-model.md, "Job guards").
extension RedisKeys {
    /// HASH: a tenant's guard settings (`rate-limit`, `replay-window-ms`).
    static func guardSettings(_ tenant: StoreIdentifier) -> RedisArgument {
        RedisArgument("fps:{t:\(tenant.value)}:guard")
    }

    /// STRING: the exact reply bytes published for one job, kept for the redelivery window.
    static func reply(_ tenant: StoreIdentifier, account: StoreIdentifier, jobID: StoreIdentifier) -> RedisArgument {
        Self.account(tenant, account, Account.reply, jobID.value)
    }

    /// STRING counter: the account's jobs in one fixed rate window (`window` = now / window length).
    static func rateCounter(_ tenant: StoreIdentifier, account: StoreIdentifier, window: Int64) -> RedisArgument {
        Self.account(tenant, account, Account.rateCounter, String(window))
    }

    /// STRING: the job ID that first sent an SPC. The hash tag holds the digest, so a busy tenant's
    /// claims spread over the cluster's slots instead of piling onto the tenant's.
    static func spcClaim(_ tenant: StoreIdentifier, transactionID: UInt64?, digest: [UInt8]) -> RedisArgument {
        let transaction = transactionID.map { HexEncoding.encode(withUnsafeBytes(of: $0.bigEndian) { Array($0) }) } ?? "none"
        return RedisArgument("fps:{t:\(tenant.value):spc:\(HexEncoding.encode(digest))}:tx:\(transaction)")
    }
}
