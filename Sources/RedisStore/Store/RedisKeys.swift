import Licensing
import Wire

/// The Redis key names of the license store; schemas/redis-data-model.md describes each.
///
/// Designed for Redis Cluster: a tenant's data shares the hash tag `{t:<tenant>}`, an account's
/// lease data shares `{t:<tenant>:a:<account>}`. A script touches keys of one tag only; a batch
/// pipeline may span many tags and uses single-key commands only. Identifiers cannot contain `{`,
/// `}` or `:` (``StoreIdentifier``), so tags cannot be forged or collide.
enum RedisKeys {
    /// STRING: the provisioning marker (``RedisLicenseStore/isProvisioned()``), the time of the
    /// first provisioning in ms; no TTL.
    static let provisioned = RedisArgument("fps:{store}:provisioned")

    /// HASH: the tenant record.
    static func tenant(_ tenant: StoreIdentifier) -> RedisArgument {
        RedisArgument("fps:{t:\(tenant.value)}:tenant")
    }

    /// HASH: one wrapped content key (`wrapped`, `iv`, `kek`).
    static func contentKey(_ tenant: StoreIdentifier, assetID: [UInt8], keyPeriod: StoreIdentifier?) -> RedisArgument {
        var key = "fps:{t:\(tenant.value)}:ck:\(HexEncoding.encode(assetID))"
        if let keyPeriod { key += ":p:\(keyPeriod.value)" }
        return RedisArgument(key)
    }

    /// STRING: a policy document for one asset, or the tenant default when `assetID` is nil.
    static func policy(_ tenant: StoreIdentifier, assetID: [UInt8]?, keyPeriod: StoreIdentifier? = nil) -> RedisArgument {
        if let assetID, let keyPeriod {
            return RedisArgument("fps:{t:\(tenant.value)}:policy:\(HexEncoding.encode(assetID)):p:\(keyPeriod.value)")
        }
        if let assetID {
            return RedisArgument("fps:{t:\(tenant.value)}:policy:\(HexEncoding.encode(assetID))")
        }
        return RedisArgument("fps:{t:\(tenant.value)}:policy")
    }

    /// `fps:{t:<tenant>:a:<account>}:`, the start of every key of one account (its hash tag).
    /// Hot paths build it once per job and write each key from it (``RedisCommandEncoder``).
    static func accountPrefix(_ tenant: StoreIdentifier, account: StoreIdentifier) -> [UInt8] {
        Array("fps:{t:\(tenant.value):a:\(account.value)}:".utf8)
    }

    /// The last part of each per-account key, after ``accountPrefix(_:account:)``.
    enum Account {
        /// ZSET: the account's lease slots, member `<device hex>/<session hex>`, score = expiry (ms).
        static let slots: StaticString = "slots"
        /// STRING: the stored result of one lease request, kept 24 h (`req:<request ID>`).
        static let leaseRequest: StaticString = "req:"
        /// HASH: slot member -> when the slot was first taken (ms), for end-oldest.
        static let slotStarts: StaticString = "slot-starts"
        /// SET: slot members ended by a newer stream (end-oldest); their renewal is refused.
        static let endedSlots: StaticString = "ended"
        /// SET: the account's registered device HUs (hex), for the device limit.
        static let devices: StaticString = "devices"
        /// HASH: asset hex -> the account's rental start (ms).
        static let rentals: StaticString = "rentals"
        /// HASH: stream ID hex -> offline license record (JSON).
        static let offline: StaticString = "offline"
        /// SET: stream IDs (hex) the account's devices invalidated.
        static let invalidated: StaticString = "invalidated"
        /// STRING: the exact reply bytes published for one job (`reply:<job ID>`; job guards).
        static let reply: StaticString = "reply:"
        /// STRING counter: the account's jobs in one rate window (`rate:<window>`; job guards).
        static let rateCounter: StaticString = "rate:"
    }

    /// One per-account key as a plain argument (admin and test paths).
    static func account(_ tenant: StoreIdentifier, _ account: StoreIdentifier, _ suffix: StaticString, _ tail: String = "") -> RedisArgument {
        var bytes = accountPrefix(tenant, account: account)
        suffix.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: tail.utf8)
        return RedisArgument(bytes)
    }

    static func slots(_ tenant: StoreIdentifier, account: StoreIdentifier) -> RedisArgument {
        Self.account(tenant, account, Account.slots)
    }

    /// `SCAN MATCH` pattern of every account's slot set (the slot-count gauge).
    static let allSlots = RedisArgument("fps:{t:*:a:*}:\(Account.slots)")

    static func leaseRequest(_ tenant: StoreIdentifier, account: StoreIdentifier, requestID: StoreIdentifier) -> RedisArgument {
        Self.account(tenant, account, Account.leaseRequest, requestID.value)
    }

    static func slotStarts(_ tenant: StoreIdentifier, account: StoreIdentifier) -> RedisArgument {
        Self.account(tenant, account, Account.slotStarts)
    }

    static func endedSlots(_ tenant: StoreIdentifier, account: StoreIdentifier) -> RedisArgument {
        Self.account(tenant, account, Account.endedSlots)
    }

    static func devices(_ tenant: StoreIdentifier, account: StoreIdentifier) -> RedisArgument {
        Self.account(tenant, account, Account.devices)
    }

    static func rentals(_ tenant: StoreIdentifier, account: StoreIdentifier) -> RedisArgument {
        Self.account(tenant, account, Account.rentals)
    }

    static func offline(_ tenant: StoreIdentifier, account: StoreIdentifier) -> RedisArgument {
        Self.account(tenant, account, Account.offline)
    }

    static func invalidated(_ tenant: StoreIdentifier, account: StoreIdentifier) -> RedisArgument {
        Self.account(tenant, account, Account.invalidated)
    }
}
