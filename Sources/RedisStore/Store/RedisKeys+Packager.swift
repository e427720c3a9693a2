import Licensing
import Wire

/// Key names a SPEKE key provider writes (schemas/redis-data-model.md, docs/redis.md "Packager keys
/// and credentials"). All sit in the tenant's hash tag, beside its content keys and policies.
extension RedisKeys {
    /// ZSET: the key-period log of one track of one live stream, member
    /// ``PackagerPeriodEntry/redisMember``, score = ``PackagerPeriodEntry/order``.
    static func periodLog(_ tenant: StoreIdentifier, contentID: [UInt8], trackType: [UInt8]) -> RedisArgument {
        RedisArgument("fps:{t:\(tenant.value)}:pkl:\(HexEncoding.encode(contentID)):\(HexEncoding.encode(trackType))")
    }

    /// HASH: the tenant's packager credentials, field = credential ID, value
    /// `<SHA-256 of the token, hex>:<created ms>`.
    static func packagerCredentials(_ tenant: StoreIdentifier) -> RedisArgument {
        RedisArgument("fps:{t:\(tenant.value)}:packagers")
    }
}
