/// Which master serves each of the 16384 hash slots, read from `CLUSTER SHARDS` (Redis 7.0+) or
/// `CLUSTER SLOTS`. A value: the cluster client swaps in a new map after a refresh.
package struct ClusterSlotMap: Sendable, Equatable {
    /// The masters that serve at least one slot, in the order first seen.
    package private(set) var masters: [RedisNodeAddress]
    /// For each slot, an index into `masters`; -1 for a slot no master serves.
    private var owners: [Int16]

    package init() {
        masters = []
        owners = Array(repeating: -1, count: HashSlot.count)
    }

    /// The master serving `slot`, nil when none does (the cluster is missing slots).
    package func master(for slot: Int) -> RedisNodeAddress? {
        guard owners.indices.contains(slot) else { return nil }
        let owner = owners[slot]
        return owner < 0 ? nil : masters[Int(owner)]
    }

    /// How many slots have a master.
    package var assignedSlots: Int { owners.count { $0 >= 0 } }

    /// Points `slot` at `node` (a `MOVED` redirect), before the next full refresh confirms it.
    package mutating func assign(_ slot: Int, to node: RedisNodeAddress) {
        guard owners.indices.contains(slot) else { return }
        owners[slot] = Int16(index(of: node))
    }

    private mutating func assign(_ range: ClosedRange<Int>, to node: RedisNodeAddress) {
        let owner = Int16(index(of: node))
        for slot in range where owners.indices.contains(slot) { owners[slot] = owner }
    }

    private mutating func index(of node: RedisNodeAddress) -> Int {
        if let known = masters.firstIndex(of: node) { return known }
        masters.append(node)
        return masters.count - 1
    }

    /// The map from a `CLUSTER SHARDS` reply (RESP2: each shard a flat list of name/value pairs,
    /// `slots` a flat list of range bounds, `nodes` a list of flat name/value lists). A node whose
    /// `endpoint` is `?` or empty is reached at its `ip`.
    package init(shards reply: RedisValue) throws(RedisError) {
        self.init()
        guard let shards = reply.arrayValue else { throw Self.unexpected("CLUSTER SHARDS") }
        for shard in shards {
            let fields = Self.pairs(shard)
            guard let bounds = fields["slots"]?.arrayValue?.compactMap(\.integerValue), bounds.count.isMultiple(of: 2),
                  let nodes = fields["nodes"]?.arrayValue else { throw Self.unexpected("CLUSTER SHARDS") }
            if bounds.isEmpty { continue }
            // Redis 7.2+ and Valkey may list a failed old master in its shard beside the promoted
            // one, and first: the healthy master owns the slots.
            let masters = nodes.map(Self.pairs).filter { $0["role"]?.string == "master" }
            let master = masters.first { $0["health"]?.string == "online" } ?? masters.first
            guard let master, let port = master["port"]?.integerValue ?? master["tls-port"]?.integerValue else {
                throw Self.unexpected("CLUSTER SHARDS (a shard without a master)")
            }
            var host = master["endpoint"]?.string ?? ""
            if host.isEmpty || host == "?" { host = master["ip"]?.string ?? "" }
            let node = RedisNodeAddress(host: host, port: Int(port))
            for pair in stride(from: 0, to: bounds.count, by: 2) {
                assign(Int(bounds[pair])...Int(bounds[pair + 1]), to: node)
            }
        }
    }

    /// The map from a `CLUSTER SLOTS` reply: `[start, end, [host, port, id, ...], replicas...]`.
    package init(slots reply: RedisValue) throws(RedisError) {
        self.init()
        guard let ranges = reply.arrayValue else { throw Self.unexpected("CLUSTER SLOTS") }
        for range in ranges {
            guard let parts = range.arrayValue, parts.count >= 3, let start = parts[0].integerValue, let end = parts[1].integerValue,
                  let master = parts[2].arrayValue, master.count >= 2, let host = master[0].string, let port = master[1].integerValue,
                  start <= end else { throw Self.unexpected("CLUSTER SLOTS") }
            assign(Int(start)...Int(end), to: RedisNodeAddress(host: host, port: Int(port)))
        }
    }

    private static func pairs(_ value: RedisValue) -> [String: RedisValue] {
        guard let flat = value.arrayValue, flat.count.isMultiple(of: 2) else { return [:] }
        var fields: [String: RedisValue] = [:]
        for index in stride(from: 0, to: flat.count, by: 2) {
            if let name = flat[index].string { fields[name] = flat[index + 1] }
        }
        return fields
    }

    private static func unexpected(_ what: String) -> RedisError {
        RedisError(.unexpectedReply, "\(what) answered an unexpected shape", isRetriable: true)
    }
}
