/// Which master serves each of the 16384 hash slots, read from `CLUSTER SHARDS` (Redis 7.0+) or
/// `CLUSTER SLOTS`. A value: the cluster client swaps in a new map after a refresh.
///
/// Both readers take the reply as untrusted: a slot range outside 0...16383 or backwards, a port
/// outside 1...65535, a master without a usable address or a field of the wrong kind is a thrown
/// `.unexpectedReply` naming it, never a trap, and no range is walked beyond the 16384 slots.
package struct ClusterSlotMap: Sendable, Equatable {
    /// The masters that serve at least one slot, in the order first seen (in slot order once the
    /// list is compacted). A master a `MOVED` took every slot from stays listed until the next
    /// refresh or compaction.
    package private(set) var masters: [RedisNodeAddress]
    /// For each slot, an index into `masters`; -1 for a slot no master serves.
    private var owners: [Int16]
    /// Each master's index in `masters`, so a reply naming thousands of masters is not searched
    /// linearly for each.
    private var positions: [RedisNodeAddress: Int16]

    package init() {
        masters = []
        owners = Array(repeating: -1, count: HashSlot.count)
        positions = [:]
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
    /// A slot outside 0...16383 is ignored (``ClusterRedirect`` never hands one over).
    package mutating func assign(_ slot: Int, to node: RedisNodeAddress) {
        guard owners.indices.contains(slot) else { return }
        let owner = index(of: node)
        owners[slot] = owner
    }

    /// `range` must lie within 0...16383 (both readers check before calling).
    private mutating func assign(_ range: ClosedRange<Int>, to node: RedisNodeAddress) {
        let owner = index(of: node)
        for slot in range { owners[slot] = owner }
    }

    /// The index of `node` in `masters`, appending it if new. The list never outgrows what an
    /// `Int16` holds: past one master per slot, masters that own no slot any more are dropped
    /// first (a reply naming a new master for the same slot again and again cannot grow it).
    private mutating func index(of node: RedisNodeAddress) -> Int16 {
        if let known = positions[node] { return known }
        if masters.count > HashSlot.count { dropMastersWithoutSlots() }
        let position = Int16(masters.count)  // at most HashSlot.count + 1 (16385), below Int16.max
        masters.append(node)
        positions[node] = position
        return position
    }

    private mutating func dropMastersWithoutSlots() {
        var renumbered = [Int16](repeating: -1, count: masters.count)
        var kept: [RedisNodeAddress] = []
        for slot in owners.indices where owners[slot] >= 0 {
            let old = Int(owners[slot])
            if renumbered[old] < 0 {
                renumbered[old] = Int16(kept.count)  // at most one per slot: < HashSlot.count
                kept.append(masters[old])
            }
            owners[slot] = renumbered[old]
        }
        masters = kept
        positions = [:]
        for (position, node) in kept.enumerated() { positions[node] = Int16(position) }
    }

    /// The map from a `CLUSTER SHARDS` reply (RESP2: each shard a flat list of name/value pairs,
    /// `slots` a flat list of range bounds, `nodes` a list of flat name/value lists). A node whose
    /// `endpoint` is `?` or empty is reached at its `ip`; one whose `ip` is empty too (a node that
    /// does not know its own address, as in a one-node cluster) at `answeredBy`'s host, as Redis
    /// asks clients to.
    /// - Throws: `.unexpectedReply` naming the first malformed field.
    package init(shards reply: RedisValue, answeredBy: RedisNodeAddress? = nil) throws(RedisError) {
        self.init()
        let command = "CLUSTER SHARDS"
        guard let shards = reply.arrayValue else { throw Self.malformed(command, "is not a list of shards") }
        for (position, shard) in shards.enumerated() {
            let what = "shard \(position)"
            let fields = try Self.pairs(shard, command, what)
            guard let rawBounds = fields["slots"]?.arrayValue else { throw Self.malformed(command, "\(what) has no slots list") }
            guard rawBounds.count.isMultiple(of: 2) else { throw Self.malformed(command, "\(what) has an odd number of slot bounds") }
            var ranges: [ClosedRange<Int>] = []
            for pair in stride(from: 0, to: rawBounds.count, by: 2) {
                ranges.append(try Self.slotRange(rawBounds[pair], rawBounds[pair + 1], command, what))
            }
            guard let nodes = fields["nodes"]?.arrayValue else { throw Self.malformed(command, "\(what) has no nodes list") }
            if ranges.isEmpty { continue }
            var masters: [[String: RedisValue]] = []
            for (index, node) in nodes.enumerated() {
                let fields = try Self.pairs(node, command, "node \(index) of \(what)")
                if fields["role"]?.string == "master" { masters.append(fields) }
            }
            // Redis 7.2+ and Valkey may list a failed old master in its shard beside the promoted
            // one, and first: the healthy master owns the slots.
            guard let master = masters.first(where: { $0["health"]?.string == "online" }) ?? masters.first else {
                throw Self.malformed(command, "\(what) serves slots but has no master")
            }
            guard let portValue = master["port"] ?? master["tls-port"] else { throw Self.malformed(command, "the master of \(what) has no port") }
            let port = try Self.port(portValue, command, "the master of \(what)")
            var host = master["endpoint"]?.string ?? ""
            if host.isEmpty || host == "?" { host = master["ip"]?.string ?? "" }
            if host.isEmpty, let answeredBy { host = answeredBy.host }
            let node = RedisNodeAddress(host: try Self.host(host, command, "the master of \(what)"), port: port)
            for range in ranges { assign(range, to: node) }
        }
    }

    /// The map from a `CLUSTER SLOTS` reply: `[start, end, [host, port, id, ...], replicas...]`.
    /// A null or empty host means the node that answered (`answeredBy`), as Redis documents.
    /// - Throws: `.unexpectedReply` naming the first malformed entry.
    package init(slots reply: RedisValue, answeredBy: RedisNodeAddress? = nil) throws(RedisError) {
        self.init()
        let command = "CLUSTER SLOTS"
        guard let ranges = reply.arrayValue else { throw Self.malformed(command, "is not a list of slot ranges") }
        for (position, entry) in ranges.enumerated() {
            let what = "entry \(position)"
            guard let parts = entry.arrayValue, parts.count >= 3 else {
                throw Self.malformed(command, "\(what) is not [start, end, master, ...]")
            }
            let range = try Self.slotRange(parts[0], parts[1], command, what)
            guard let master = parts[2].arrayValue, master.count >= 2 else {
                throw Self.malformed(command, "the master of \(what) is not [host, port, ...]")
            }
            var host: String
            switch master[0] {
            case .null: host = ""
            case let value:
                guard let text = value.string else { throw Self.malformed(command, "the master of \(what) has a host that is not a string") }
                host = text
            }
            if host.isEmpty, let answeredBy { host = answeredBy.host }
            let node = RedisNodeAddress(
                host: try Self.host(host, command, "the master of \(what)"), port: try Self.port(master[1], command, "the master of \(what)"))
            assign(range, to: node)
        }
    }

    // MARK: Field checks

    /// A flat name/value list as a dictionary (a later duplicate name wins).
    private static func pairs(_ value: RedisValue, _ command: String, _ what: String) throws(RedisError) -> [String: RedisValue] {
        guard let flat = value.arrayValue else { throw malformed(command, "\(what) is not a list of fields") }
        guard flat.count.isMultiple(of: 2) else { throw malformed(command, "\(what) has a field without a value") }
        var fields: [String: RedisValue] = [:]
        for index in stride(from: 0, to: flat.count, by: 2) {
            guard let name = flat[index].string else { throw malformed(command, "\(what) has a field name that is not a string") }
            fields[name] = flat[index + 1]
        }
        return fields
    }

    /// `start...end` within the cluster's slots.
    private static func slotRange(_ start: RedisValue, _ end: RedisValue, _ command: String, _ what: String) throws(RedisError) -> ClosedRange<Int> {
        guard let first = start.integerValue, let last = end.integerValue else {
            throw malformed(command, "\(what) has a slot bound that is not an integer")
        }
        guard first <= last else { throw malformed(command, "\(what) has a backwards slot range \(first)...\(last)") }
        guard first >= 0, last < HashSlot.count else {
            throw malformed(command, "\(what) has slots \(first)...\(last), outside 0...\(HashSlot.count - 1)")
        }
        return Int(first)...Int(last)
    }

    private static func port(_ value: RedisValue, _ command: String, _ what: String) throws(RedisError) -> Int {
        guard let port = value.integerValue else { throw malformed(command, "\(what) has a port that is not an integer") }
        guard let valid = RedisNodeAddress.validPort(port) else { throw malformed(command, "\(what) has port \(port), outside 1...65535") }
        return valid
    }

    private static func host(_ text: String, _ command: String, _ what: String) throws(RedisError) -> String {
        guard RedisNodeAddress.isValidHost(text) else {
            throw malformed(command, text.isEmpty ? "\(what) has no address" : "\(what) has an unusable address \(String(reflecting: String(text.prefix(64))))")
        }
        return text
    }

    private static func malformed(_ command: String, _ problem: String) -> RedisError {
        RedisError(.unexpectedReply, "\(command) answered a malformed map: \(problem)", isRetriable: true)
    }
}
