import Wire

/// Bounds the `tenant` label of the reply counters: the first `limit` known tenants a worker answers
/// get their own label value, every later one is counted as `other`.
///
/// A tenant ID comes from the job, so an unbounded label would let one caller (or a bug) create a
/// time series per request and exhaust Prometheus. First come is deterministic for a worker's
/// lifetime (a series never changes meaning) and, since the big tenants of a live event answer
/// first and most, in practice the largest ones. Undecodable jobs have no tenant, and a tenant the
/// store does not know (reply status `unknownTenant`) is whatever the caller typed: both are
/// `unknown`, and neither takes a slot, so garbage cannot push a real tenant into `other`.
///
/// Tenants are told apart by their bytes (``ByteKey``), as the store tells them apart: canonically
/// equivalent names with other bytes are two tenants, each with its own slot. The metrics registry
/// keys label values as `String`s (canonical equivalence), so the second of two such tenants is
/// labelled `0x` and its bytes in hex, and the two series stay apart there too.
package struct TenantLabels: Sendable, Hashable {
    /// The label value for tenants past the limit.
    package static let other = "other"
    /// The label value for jobs of no known tenant.
    package static let unknown = "unknown"
    /// How many tenants get their own label. Default: 20.
    package let limit: Int
    /// Each admitted tenant's label, by the tenant's bytes.
    private var admitted: [ByteKey: String] = [:]
    /// The labels handed out, compared as the registry compares them (`String` equality).
    private var labelsInUse: Set<String> = []

    package init(limit: Int = 20) {
        self.limit = max(0, limit)
    }

    /// The label value for `tenant`, admitting it while there is room.
    /// - Parameter isKnown: false when the store does not know the tenant (``KSMStatus/unknownTenant``).
    package mutating func label(for tenant: String, isKnown: Bool = true) -> String {
        if tenant.isEmpty || !isKnown { return Self.unknown }
        let key = ByteKey(tenant)
        if let label = admitted[key] { return label }
        guard admitted.count < limit else { return Self.other }
        // Canonically equivalent to a label already out (other bytes, or the key would have matched):
        // its bytes in hex, and a counter should a tenant have been named that hex already.
        var label = labelsInUse.contains(tenant) ? "0x" + HexEncoding.encode(key.bytes) : tenant
        var suffix = 1
        while labelsInUse.contains(label) {
            suffix += 1
            label = "0x" + HexEncoding.encode(key.bytes) + "-\(suffix)"
        }
        admitted[key] = label
        labelsInUse.insert(label)
        return label
    }
}
