import Licensing
import Wire

/// Key names of rotation schedules and per-asset viewer sets (schemas/redis-data-model.md).
extension RedisKeys {
    /// HASH: the rotation schedule of one asset (``RotationSchedule/fields``).
    static func rotation(_ tenant: StoreIdentifier, assetID: [UInt8]) -> RedisArgument {
        RedisArgument("fps:{t:\(tenant.value)}:rot:\(HexEncoding.encode(assetID))")
    }

    /// ZSET: every schedule's boundary, member `<tenant>:<asset hex>`, score = boundary (ms). One
    /// key outside any tenant tag, so "what is due" is one `ZRANGEBYSCORE` for the whole fleet;
    /// tenant IDs contain no `:`, so the member splits unambiguously.
    static let rotationIndex = RedisArgument("fps:rotations")

    /// The index member of (tenant, asset).
    static func rotationMember(_ tenant: StoreIdentifier, assetID: [UInt8]) -> String {
        "\(tenant.value):\(HexEncoding.encode(assetID))"
    }

    /// ZSET: the asset's live viewers, member `<account>/<slot member>`, score = lease expiry (ms);
    /// written beside each lease in the same pipeline, counted with `ZCOUNT`.
    static func viewers(_ tenant: StoreIdentifier, assetID: [UInt8]) -> RedisArgument {
        RedisArgument("fps:{t:\(tenant.value)}:viewers:\(HexEncoding.encode(assetID))")
    }
}
