import Licensing

/// The Redis key names of the license store; schemas/redis-data-model.md describes each.
///
/// Designed for Redis Cluster: a tenant's data shares the hash tag `{t:<tenant>}`, an account's
/// lease data shares `{t:<tenant>:a:<account>}`. A script touches keys of one tag only; a batch
/// pipeline may span many tags and uses single-key commands only. Identifiers cannot contain `{`,
/// `}` or `:` (``StoreIdentifier``), so tags cannot be forged or collide.
enum RedisKeys {
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

    /// ZSET: the account's lease slots, member `<device hex>/<session hex>`, score = expiry (ms).
    static func slots(_ tenant: StoreIdentifier, account: StoreIdentifier) -> RedisArgument {
        RedisArgument("fps:{t:\(tenant.value):a:\(account.value)}:slots")
    }

    /// STRING: the stored result of one lease request, kept 24 h.
    static func leaseRequest(_ tenant: StoreIdentifier, account: StoreIdentifier, requestID: StoreIdentifier) -> RedisArgument {
        RedisArgument("fps:{t:\(tenant.value):a:\(account.value)}:req:\(requestID.value)")
    }

    /// HASH: slot member -> when the slot was first taken (ms), for end-oldest.
    static func slotStarts(_ tenant: StoreIdentifier, account: StoreIdentifier) -> RedisArgument {
        RedisArgument("fps:{t:\(tenant.value):a:\(account.value)}:slot-starts")
    }

    /// SET: slot members ended by a newer stream (end-oldest); their renewal is refused.
    static func endedSlots(_ tenant: StoreIdentifier, account: StoreIdentifier) -> RedisArgument {
        RedisArgument("fps:{t:\(tenant.value):a:\(account.value)}:ended")
    }

    /// SET: the account's registered device HUs (hex), for the device limit.
    static func devices(_ tenant: StoreIdentifier, account: StoreIdentifier) -> RedisArgument {
        RedisArgument("fps:{t:\(tenant.value):a:\(account.value)}:devices")
    }

    /// HASH: asset hex -> the account's rental start (ms).
    static func rentals(_ tenant: StoreIdentifier, account: StoreIdentifier) -> RedisArgument {
        RedisArgument("fps:{t:\(tenant.value):a:\(account.value)}:rentals")
    }

    /// HASH: stream ID hex -> offline license record (JSON).
    static func offline(_ tenant: StoreIdentifier, account: StoreIdentifier) -> RedisArgument {
        RedisArgument("fps:{t:\(tenant.value):a:\(account.value)}:offline")
    }

    /// SET: stream IDs (hex) the account's devices invalidated.
    static func invalidated(_ tenant: StoreIdentifier, account: StoreIdentifier) -> RedisArgument {
        RedisArgument("fps:{t:\(tenant.value):a:\(account.value)}:invalidated")
    }
}
