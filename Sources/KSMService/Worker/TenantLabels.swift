/// Bounds the `tenant` label of the reply counters: the first `limit` known tenants a worker answers
/// get their own label value, every later one is counted as `other`.
///
/// A tenant ID comes from the job, so an unbounded label would let one caller (or a bug) create a
/// time series per request and exhaust Prometheus. First come is deterministic for a worker's
/// lifetime (a series never changes meaning) and, since the big tenants of a live event answer
/// first and most, in practice the largest ones. Undecodable jobs have no tenant, and a tenant the
/// store does not know (reply status `unknownTenant`) is whatever the caller typed: both are
/// `unknown`, and neither takes a slot, so garbage cannot push a real tenant into `other`.
public struct TenantLabels: Sendable, Hashable {
    /// The label value for tenants past the limit.
    public static let other = "other"
    /// The label value for jobs of no known tenant.
    public static let unknown = "unknown"
    /// How many tenants get their own label. Default: 20.
    public let limit: Int
    private var admitted: Set<String> = []

    public init(limit: Int = 20) {
        self.limit = max(0, limit)
    }

    /// The label value for `tenant`, admitting it while there is room.
    /// - Parameter isKnown: false when the store does not know the tenant (``KSMStatus/unknownTenant``).
    public mutating func label(for tenant: String, isKnown: Bool = true) -> String {
        if tenant.isEmpty || !isKnown { return Self.unknown }
        if admitted.contains(tenant) { return tenant }
        guard admitted.count < limit else { return Self.other }
        admitted.insert(tenant)
        return tenant
    }
}
