import Foundation
import Testing

@testable import RedisStore

/// `CLUSTER SHARDS` and `CLUSTER SLOTS` replies of every malformed shape are a thrown
/// `.unexpectedReply` naming what is wrong: never a trap (a backwards range, an `Int16` index past
/// its end), never a walk over more than the 16384 slots (a range up to `Int64.max`).
@Suite(.timeLimit(.minutes(1)))
struct MalformedClusterMapTests {
    // MARK: Building replies

    static func text(_ string: String) -> RedisValue { .bulkString(Array(string.utf8)) }

    static func fields(_ pairs: [(String, RedisValue)]) -> RedisValue {
        .array(pairs.flatMap { [text($0.0), $0.1] })
    }

    static func node(
        port: RedisValue? = .integer(7000), ip: String = "10.0.0.1", endpoint: String = "10.0.0.1", role: String = "master", health: String = "online"
    ) -> RedisValue {
        var pairs: [(String, RedisValue)] = [("id", text(String(repeating: "a", count: 40)))]
        if let port { pairs.append(("port", port)) }
        pairs += [("ip", text(ip)), ("endpoint", text(endpoint)), ("role", text(role)), ("replication-offset", .integer(0)), ("health", text(health))]
        return fields(pairs)
    }

    static func shard(_ bounds: [RedisValue], nodes: [RedisValue] = [node()]) -> RedisValue {
        fields([("slots", .array(bounds)), ("nodes", .array(nodes))])
    }

    static func slotsEntry(_ start: RedisValue, _ end: RedisValue, host: RedisValue = text("10.0.0.1"), port: RedisValue = .integer(7000)) -> RedisValue {
        .array([start, end, .array([host, port, text(String(repeating: "b", count: 40))])])
    }

    static func shardsError(_ reply: RedisValue, answeredBy: RedisNodeAddress? = nil) -> RedisError? {
        do {
            _ = try ClusterSlotMap(shards: reply, answeredBy: answeredBy)
            return nil
        } catch {
            return error
        }
    }

    static func slotsError(_ reply: RedisValue, answeredBy: RedisNodeAddress? = nil) -> RedisError? {
        do {
            _ = try ClusterSlotMap(slots: reply, answeredBy: answeredBy)
            return nil
        } catch {
            return error
        }
    }

    // MARK: CLUSTER SHARDS

    static let malformedShards: [(reply: RedisValue, problem: String)] = [
        (.integer(1), "is not a list of shards"),
        (.array([.integer(1)]), "shard 0 is not a list of fields"),
        (.array([.array([text("slots")])]), "shard 0 has a field without a value"),
        (.array([.array([.integer(5), .array([])])]), "shard 0 has a field name that is not a string"),
        (.array([fields([("nodes", .array([node()]))])]), "shard 0 has no slots list"),
        (.array([fields([("slots", text("0-16383")), ("nodes", .array([node()]))])]), "shard 0 has no slots list"),
        (.array([shard([.integer(0)])]), "shard 0 has an odd number of slot bounds"),
        (.array([shard([.integer(0), text("x")])]), "shard 0 has a slot bound that is not an integer"),
        (.array([shard([.integer(0), .null])]), "shard 0 has a slot bound that is not an integer"),
        (.array([shard([.integer(0), .array([])])]), "shard 0 has a slot bound that is not an integer"),
        (.array([shard([.integer(0), .integer(10)]), shard([.integer(10), .integer(5)])]), "shard 1 has a backwards slot range 10...5"),
        (.array([shard([.integer(-1), .integer(5)])]), "shard 0 has slots -1...5, outside 0...16383"),
        (.array([shard([.integer(0), .integer(16384)])]), "shard 0 has slots 0...16384, outside 0...16383"),
        (.array([shard([.integer(0), .integer(.max)])]), "outside 0...16383"),
        (.array([shard([.integer(.min), .integer(.max)])]), "outside 0...16383"),
        (.array([shard([.integer(.max), .integer(.min)])]), "backwards slot range"),
        (.array([fields([("slots", .array([.integer(0), .integer(1)]))])]), "shard 0 has no nodes list"),
        (.array([shard([.integer(0), .integer(1)], nodes: [.integer(3)])]), "node 0 of shard 0 is not a list of fields"),
        (.array([shard([.integer(0), .integer(1)], nodes: [.array([text("role")])])]), "node 0 of shard 0 has a field without a value"),
        (.array([shard([.integer(0), .integer(1)], nodes: [])]), "shard 0 serves slots but has no master"),
        (.array([shard([.integer(0), .integer(1)], nodes: [node(role: "replica")])]), "shard 0 serves slots but has no master"),
        (.array([shard([.integer(0), .integer(1)], nodes: [node(port: nil)])]), "the master of shard 0 has no port"),
        (.array([shard([.integer(0), .integer(1)], nodes: [node(port: text("six"))])]), "port that is not an integer"),
        (.array([shard([.integer(0), .integer(1)], nodes: [node(port: .integer(0))])]), "has port 0, outside 1...65535"),
        (.array([shard([.integer(0), .integer(1)], nodes: [node(port: .integer(-6379))])]), "has port -6379, outside 1...65535"),
        (.array([shard([.integer(0), .integer(1)], nodes: [node(port: .integer(65536))])]), "has port 65536, outside 1...65535"),
        (.array([shard([.integer(0), .integer(1)], nodes: [node(port: .integer(.max))])]), "outside 1...65535"),
        (.array([shard([.integer(0), .integer(1)], nodes: [node(ip: "", endpoint: "")])]), "the master of shard 0 has no address"),
        (.array([shard([.integer(0), .integer(1)], nodes: [node(ip: "", endpoint: "?")])]), "the master of shard 0 has no address"),
        (.array([shard([.integer(0), .integer(1)], nodes: [node(endpoint: "redis 1")])]), "has an unusable address \"redis 1\""),
        (.array([shard([.integer(0), .integer(1)], nodes: [node(endpoint: "redis\u{0}1")])]), "has an unusable address"),
        (.array([shard([.integer(0), .integer(1)], nodes: [node(endpoint: String(repeating: "r", count: 256))])]), "has an unusable address"),
    ]

    @Test("A malformed CLUSTER SHARDS reply is an error naming the shape", arguments: malformedShards.indices)
    func malformedShardsReply(index: Int) throws {
        let (reply, problem) = Self.malformedShards[index]
        let error = try #require(Self.shardsError(reply))
        #expect(error.code == .unexpectedReply)
        #expect(error.message.hasPrefix("CLUSTER SHARDS answered a malformed map: "))
        #expect(error.message.contains(problem), "\(error.message)")
    }

    @Test("A range up to Int64.max is refused at once, not walked slot by slot")
    func hugeRangeIsRefusedQuickly() throws {
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            #expect(Self.shardsError(.array([Self.shard([.integer(0), .integer(.max)])])) != nil)
            #expect(Self.slotsError(.array([Self.slotsEntry(.integer(0), .integer(.max))])) != nil)
        }
        #expect(elapsed < .seconds(1))
    }

    @Test("A shard without slots needs no master; the others still map")
    func emptyShardIsSkipped() throws {
        let map = try ClusterSlotMap(
            shards: .array([
                Self.shard([], nodes: []),
                Self.shard([.integer(0), .integer(16383)]),
            ]))
        #expect(map.assignedSlots == HashSlot.count)
        #expect(map.masters == [RedisNodeAddress(host: "10.0.0.1", port: 7000)])
    }

    @Test("A master with no address of its own is the node that answered; `?` falls back to the ip")
    func addressFallbacks() throws {
        let answeredBy = RedisNodeAddress(host: "seed.example", port: 6379)
        let own = try ClusterSlotMap(
            shards: .array([Self.shard([.integer(0), .integer(16383)], nodes: [Self.node(port: .integer(7001), ip: "", endpoint: "")])]),
            answeredBy: answeredBy)
        #expect(own.master(for: 0) == RedisNodeAddress(host: "seed.example", port: 7001))
        let questioned = try ClusterSlotMap(
            shards: .array([Self.shard([.integer(0), .integer(16383)], nodes: [Self.node(ip: "10.0.0.9", endpoint: "?")])]), answeredBy: answeredBy)
        #expect(questioned.master(for: 16383) == RedisNodeAddress(host: "10.0.0.9", port: 7000))
        let slots = try ClusterSlotMap(slots: .array([Self.slotsEntry(.integer(0), .integer(16383), host: .null)]), answeredBy: answeredBy)
        #expect(slots.master(for: 5) == RedisNodeAddress(host: "seed.example", port: 7000))
    }

    @Test("40,000 shards each naming a new master for slot 0 keep the master list within Int16")
    func manyMastersForOneSlot() throws {
        let shards = (0..<40_000).map { index in
            Self.shard([.integer(0), .integer(0)], nodes: [Self.node(port: .integer(Int64(1 + index % 65535)), endpoint: "n\(index)")])
        }
        let map = try ClusterSlotMap(shards: .array(shards))
        #expect(map.masters.count <= HashSlot.count + 1)
        #expect(map.master(for: 0) == RedisNodeAddress(host: "n39999", port: 1 + 39_999 % 65535))
        #expect(map.assignedSlots == 1)
    }

    @Test("100,000 MOVED redirects to new nodes keep the master list within Int16 and every slot's owner right")
    func manyMovedRedirects() throws {
        var map = try ClusterSlotMap(shards: .array([Self.shard([.integer(0), .integer(16383)])]))
        for index in 0..<100_000 {
            map.assign(index % 3, to: RedisNodeAddress(host: "moved\(index)", port: 7000))
        }
        #expect(map.masters.count <= HashSlot.count + 1)
        #expect(map.master(for: 0) == RedisNodeAddress(host: "moved99999", port: 7000))
        #expect(map.master(for: 2) == RedisNodeAddress(host: "moved99998", port: 7000))
        #expect(map.master(for: 3) == RedisNodeAddress(host: "10.0.0.1", port: 7000))
        #expect(map.assignedSlots == HashSlot.count)
        map.assign(-1, to: RedisNodeAddress(host: "x", port: 1))
        map.assign(HashSlot.count, to: RedisNodeAddress(host: "x", port: 1))
        #expect(map.master(for: -1) == nil && map.master(for: HashSlot.count) == nil)
    }

    // MARK: CLUSTER SLOTS

    static let malformedSlots: [(reply: RedisValue, problem: String)] = [
        (.null, "is not a list of slot ranges"),
        (.array([.integer(1)]), "entry 0 is not [start, end, master, ...]"),
        (.array([.array([.integer(0), .integer(1)])]), "entry 0 is not [start, end, master, ...]"),
        (.array([slotsEntry(text("a"), .integer(1))]), "entry 0 has a slot bound that is not an integer"),
        (.array([slotsEntry(.integer(0), .integer(1)), slotsEntry(.integer(9), .integer(3))]), "entry 1 has a backwards slot range 9...3"),
        (.array([slotsEntry(.integer(-5), .integer(1))]), "entry 0 has slots -5...1, outside 0...16383"),
        (.array([slotsEntry(.integer(16_000), .integer(20_000))]), "entry 0 has slots 16000...20000, outside 0...16383"),
        (.array([slotsEntry(.integer(.min), .integer(.max))]), "outside 0...16383"),
        (.array([.array([.integer(0), .integer(1), text("10.0.0.1:7000")])]), "the master of entry 0 is not [host, port, ...]"),
        (.array([.array([.integer(0), .integer(1), .array([text("10.0.0.1")])])]), "the master of entry 0 is not [host, port, ...]"),
        (.array([slotsEntry(.integer(0), .integer(1), host: .integer(10))]), "the master of entry 0 has a host that is not a string"),
        (.array([slotsEntry(.integer(0), .integer(1), host: .null)]), "the master of entry 0 has no address"),
        (.array([slotsEntry(.integer(0), .integer(1), host: text(""))]), "the master of entry 0 has no address"),
        (.array([slotsEntry(.integer(0), .integer(1), host: text("?"))]), "the master of entry 0 has an unusable address \"?\""),
        (.array([slotsEntry(.integer(0), .integer(1), host: text("a\tb"))]), "has an unusable address"),
        (.array([slotsEntry(.integer(0), .integer(1), port: text("x"))]), "the master of entry 0 has a port that is not an integer"),
        (.array([slotsEntry(.integer(0), .integer(1), port: .integer(0))]), "has port 0, outside 1...65535"),
        (.array([slotsEntry(.integer(0), .integer(1), port: .integer(70_000))]), "has port 70000, outside 1...65535"),
        (.array([slotsEntry(.integer(0), .integer(1), port: .integer(.min))]), "outside 1...65535"),
    ]

    @Test("A malformed CLUSTER SLOTS reply is an error naming the shape", arguments: malformedSlots.indices)
    func malformedSlotsReply(index: Int) throws {
        let (reply, problem) = Self.malformedSlots[index]
        let error = try #require(Self.slotsError(reply))
        #expect(error.code == .unexpectedReply)
        #expect(error.message.hasPrefix("CLUSTER SLOTS answered a malformed map: "))
        #expect(error.message.contains(problem), "\(error.message)")
    }

    @Test("The fuzzer's first find on the unchecked reader: a mutated real reply with a backwards range")
    func fuzzerFind() throws {
        // FuzzRedisReply found this within a minute against the reader before the range checks
        // (`Range requires lowerBound <= upperBound`): a real reply with hiredis-tolerated damage.
        let crasher = ReplySeeds.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FailCases/cluster-shards-backwards-range.resp")
        let replies = try HiredisReader.replies(in: Array(try Data(contentsOf: crasher)))
        let reply = try #require(replies.first)
        let error = try #require(Self.shardsError(reply))
        #expect(error.message.contains("backwards slot range"), "\(error.message)")
    }

    // MARK: Real replies

    @Test("Real CLUSTER SHARDS and CLUSTER SLOTS replies of Redis 7.0 map every slot")
    func realReplies() throws {
        // Captured from a six-node Redis 7.0 cluster on ports 17001-17006 (FuzzTesting/Seeds/FuzzRedisReply).
        let masters = [17001, 17002, 17003].map { RedisNodeAddress(host: "127.0.0.1", port: $0) }
        let readers: [(String, (RedisValue) throws(RedisError) -> ClusterSlotMap)] = [
            ("cluster-shards", { value throws(RedisError) in try ClusterSlotMap(shards: value) }),
            ("cluster-slots", { value throws(RedisError) in try ClusterSlotMap(slots: value) }),
        ]
        for (name, reader) in readers {
            let whole = try reader(try ReplySeeds.value(name))
            #expect(whole.assignedSlots == HashSlot.count)
            #expect(Set(whole.masters) == Set(masters))
            #expect(whole.master(for: 0) == masters[0] && whole.master(for: 5461) == masters[1] && whole.master(for: 16383) == masters[2])
            // The same cluster after slot 100 moved to the second master: one shard, two ranges.
            let split = try reader(try ReplySeeds.value("\(name)-split"))
            #expect(split.assignedSlots == HashSlot.count)
            #expect(split.master(for: 99) == masters[0] && split.master(for: 100) == masters[1] && split.master(for: 101) == masters[0])
        }
    }
}
