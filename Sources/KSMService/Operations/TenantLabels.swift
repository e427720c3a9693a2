/// Bounds the `tenant` label of the reply counters: the first `limit` tenants a worker answers get
/// their own label value, every later one is counted as `other`.
///
/// A tenant ID comes from the job, so an unbounded label would let one caller (or a bug) create a
/// time series per request and exhaust Prometheus. First come is deterministic for a worker's
/// lifetime (a series never changes meaning) and, since the big tenants of a live event answer
/// first and most, in practice the largest ones. Undecodable jobs have no tenant: `unknown`.
public struct TenantLabels: Sendable, Hashable {
    /// The label value for tenants past the limit.
    public static let other = "other"
    /// How many tenants get their own label. Default: 20.
    public let limit: Int
    private var admitted: Set<String> = []

    public init(limit: Int = 20) {
        self.limit = max(0, limit)
    }

    /// The label value for `tenant`, admitting it while there is room.
    public mutating func label(for tenant: String) -> String {
        if tenant.isEmpty { return "unknown" }
        if admitted.contains(tenant) { return tenant }
        guard admitted.count < limit else { return Self.other }
        admitted.insert(tenant)
        return tenant
    }
}
