import Foundation
import KSMTestSupport
import Licensing
import Testing

@testable import RedisStore

/// The cluster client against real six-node clusters: routing, reassembly, redirects while a slot
/// moves, scripts per node, and the error when the cluster cannot serve.
@Suite(.timeLimit(.minutes(3)))
struct RedisClusterClientTests {
    @Test("redis-cluster:// URLs give seeds and the same credentials as redis://")
    func clusterURLs() throws {
        let configuration = try RedisClusterConfiguration(url: "redis-cluster://ksm:p%40ss@10.0.0.1:7000,10.0.0.2:7001,[::1]:7002")
        #expect(
            configuration.seeds == [
                RedisNodeAddress(host: "10.0.0.1", port: 7000), RedisNodeAddress(host: "10.0.0.2", port: 7001),
                RedisNodeAddress(host: "::1", port: 7002),
            ])
        #expect(configuration.node.username == "ksm")
        #expect(configuration.node.password == "p@ss")
        #expect(!configuration.description.contains("p@ss"))
        #expect(throws: RedisError.self) { try RedisClusterConfiguration(url: "redis-cluster://h:1,h:2/3") }
        #expect(throws: RedisError.self) { try RedisClusterConfiguration(url: "redis-cluster://h:1,,h:2") }
        guard case .cluster = try RedisEndpoint(url: "redis-cluster://h:1") else {
            Issue.record("redis-cluster:// is not a cluster")
            return
        }
        guard case .single(let single) = try RedisEndpoint(url: "redis://h:6380/2") else {
            Issue.record("redis:// is not one server")
            return
        }
        #expect(single.port == 6380 && single.database == 2)
    }

    @Test("WAIT on a node a failover made a replica is a retriable error, so the cluster client reads the map again")
    func waitOnAReplicaIsRetriable() async throws {
        try await SharedRedisCluster.with { cluster in
            let replica = try #require(try await cluster.nodes.indices.asyncFirst { try await cluster.role($0) == "slave" })
            let client = try cluster.nodeClient(replica)
            do throws(RedisError) {
                _ = try await client.pipeline([RedisCommand(["PING"])], durability: RedisDurability(replicas: 1, timeout: .milliseconds(100)))
                Issue.record("WAIT on a replica was accepted")
            } catch {
                #expect(error.isRetriable && error.message.contains("no longer a master"), "\(error)")
            }
        }
    }

    @Test("a pipeline over every master comes back in the caller's order")
    func pipelineSplitsAndReassembles() async throws {
        try await SharedRedisCluster.with { cluster in
            let client = try RedisClusterClient(configuration: cluster.configuration())
            let keys = (0..<300).map { "key:\($0)" }
            var commands: [RedisCommand] = []
            for (index, key) in keys.enumerated() {
                commands.append(RedisCommand(["SET", RedisArgument(key), RedisArgument("v\(index)")]))
                commands.append(RedisCommand(["GET", RedisArgument(key)]))
            }
            let replies = try await client.pipeline(commands)
            for index in keys.indices {
                #expect(replies[2 * index] == .simpleString("OK"))
                #expect(replies[2 * index + 1].string == "v\(index)")
            }
            let map = try await client.slotMap()
            #expect(map.masters.count == 3)
            #expect(map.assignedSlots == HashSlot.count)
            #expect(Set(keys.compactMap { map.master(for: HashSlot.of($0)) }).count == 3, "the keys spread over all masters")
            // A transaction travels as one unit to its key's master.
            let transaction = try await client.pipeline([
                RedisCommand(["MULTI"]), RedisCommand(["SET", "{tx}a", "1"]), RedisCommand(["INCR", "{tx}a"]), RedisCommand(["EXEC"]),
                RedisCommand(["GET", "key:7"]),
            ])
            #expect(transaction[3] == .array([.simpleString("OK"), .integer(2)]))
            #expect(transaction[4].string == "v7")
            // Every master is visited for keyspace-wide work.
            var total: Int64 = 0
            for node in try await client.masterClients() { total += try await node.send(["DBSIZE"]).integerValue ?? 0 }
            #expect(total == 301)
        }
    }

    @Test("the slot-count gauge and the provisioning check see every master's keys", arguments: RedisBackend.allCases)
    func keyspaceWideWork(backend: RedisBackend) async throws {
        try await backend.withClient { client in
            let store = RedisLicenseStore(client: client)
            let now: Int64 = 1_700_000_000_000
            let requests = (0..<30).map { n in
                LeaseRequest(
                    requestID: try! StoreIdentifier("r\(n)"), tenant: try! StoreIdentifier("acme"), account: try! StoreIdentifier("user\(n)"),
                    deviceID: [UInt8(n)], sessionID: 1, maxConcurrentStreams: 2, leaseDurationSeconds: 600, nowMilliseconds: now)
            }
            _ = try await store.acquireLeases(requests)
            let sample = try await LeaseSlotGauge().count(client: client, nowMilliseconds: now)
            #expect(sample == LeaseSlotGauge.Sample(slots: 30, accounts: 30, isComplete: true))
            // A tenant record without the marker, on whichever master holds the tenant's slot.
            _ = try await client.send(["HSET", "fps:{t:zeta}:tenant", "kek", "k"])
            #expect(try await store.isProvisioned() == false)
            #expect(try await store.markProvisionedIfTenantsExist())
            #expect(try await store.isProvisioned())
        }
    }

    @Test("a master that lost its scripts (SCRIPT FLUSH) answers NOSCRIPT and gets them again")
    func noScriptOnOneNode() async throws {
        try await SharedRedisCluster.with { cluster in
            let client = try RedisClusterClient(configuration: cluster.configuration())
            let script = RedisScript("return redis.call('INCR', KEYS[1])")
            let keys: [RedisArgument] = (0..<30).map { RedisArgument("n:\($0)") }
            let first = try await client.pipeline(keys.map { .evalScript(script, keys: [$0], arguments: []) })
            #expect(first == Array(repeating: .integer(1), count: keys.count))
            let sha = try #require(script.sha1)
            // Flush the script on the master of the first key only.
            let map = try await client.slotMap()
            let owner = try #require(map.master(for: HashSlot.of(keys[0].bytes)))
            let flushed = try client.client(for: owner)
            _ = try await flushed.send(["SCRIPT", "FLUSH"])
            #expect(try await flushed.send(["SCRIPT", "EXISTS", RedisArgument(sha)]) == .array([.integer(0)]))
            let second = try await client.pipeline(keys.map { .evalScript(script, keys: [$0], arguments: []) })
            #expect(second == Array(repeating: .integer(2), count: keys.count))
            #expect(try await flushed.send(["SCRIPT", "EXISTS", RedisArgument(sha)]) == .array([.integer(1)]))
        }
    }

    /// A key in a slot of master `from`, and another master `to`.
    private static func pick(_ cluster: RedisClusterProcess, _ client: RedisClusterClient, tag: String) async throws
        -> (slot: Int, from: Int, to: Int, fromID: String, toID: String)
    {
        let map = try await client.slotMap()
        let slot = HashSlot.of(tag)
        let owner = try #require(map.master(for: slot))
        let from = try #require(cluster.index(ofPort: owner.port))
        let other = try #require(map.masters.first { $0 != owner })
        let to = try #require(cluster.index(ofPort: other.port))
        let fromID = try #require(try await cluster.nodeClient(from).send(["CLUSTER", "MYID"]).string)
        let toID = try #require(try await cluster.nodeClient(to).send(["CLUSTER", "MYID"]).string)
        return (slot, from, to, fromID, toID)
    }

    /// Moves `keys` from node `from` to node `to` with MIGRATE (the slot must be migrating).
    private static func migrate(_ cluster: RedisClusterProcess, _ keys: [String], from: Int, to: Int) async throws {
        let reply = try await cluster.nodeClient(from).send(
            ["MIGRATE", "127.0.0.1", RedisArgument(cluster.nodes[to].port), "", "0", "5000", "AUTH", RedisArgument(cluster.password), "KEYS"]
                + keys.map { RedisArgument($0) })
        #expect(reply.string == "OK")
    }

    @Test("a slot moved away mid-batch: MOVED refreshes the map and the batch is answered in order")
    func movedSlot() async throws {
        let cluster = try await RedisClusterProcess()
        defer { cluster.stop() }
        let client = try RedisClusterClient(configuration: cluster.configuration())
        let moving = (0..<5).map { "{t:moving}k\($0)" }  // the tag of tenant "moving"
        let others = (0..<40).map { "other:\($0)" }
        _ = try await client.pipeline((moving + others).map { ["SET", RedisArgument($0), RedisArgument("v-\($0)")] })
        let p = try await Self.pick(cluster, client, tag: "t:moving")
        // The whole slot moves (IMPORTING, MIGRATING, MIGRATE, then SETSLOT NODE everywhere) while the
        // client's map still names the old master.
        _ = try await cluster.nodeClient(p.to).send(["CLUSTER", "SETSLOT", RedisArgument(p.slot), "IMPORTING", RedisArgument(p.fromID)])
        _ = try await cluster.nodeClient(p.from).send(["CLUSTER", "SETSLOT", RedisArgument(p.slot), "MIGRATING", RedisArgument(p.toID)])
        try await Self.migrate(cluster, moving, from: p.from, to: p.to)
        for index in cluster.nodes.indices where try await cluster.role(index) == "master" {
            _ = try await cluster.nodeClient(index).send(["CLUSTER", "SETSLOT", RedisArgument(p.slot), "NODE", RedisArgument(p.toID)])
        }
        let keys = (others.prefix(20) + moving + others.suffix(20)).map { $0 }
        let replies = try await client.pipeline(keys.map { ["GET", RedisArgument($0)] })
        #expect(replies.map(\.string) == keys.map { "v-\($0)" })
        let map = try await client.slotMap()
        #expect(map.master(for: p.slot)?.port == cluster.nodes[p.to].port, "the map was refreshed")
        // A store batch through the moved slot's tag works too.
        let store = RedisLicenseStore(client: client)
        try await store.putPolicy(Array("{}".utf8), tenant: try StoreIdentifier("moving"), assetID: nil)
        #expect(try await client.send(["EXISTS", "fps:{t:moving}:policy"]).integerValue == 1)

        // Then nobody serves the slot (DELSLOTS on its owner): bounded retries, then a retriable
        // cluster error, which the store answers as unavailable.
        _ = try await cluster.nodeClient(p.to).send(["CLUSTER", "DELSLOTS", RedisArgument(p.slot)])
        var impatient = cluster.configuration()
        impatient.maximumRetries = 2
        impatient.retryBackoff = .init(base: .milliseconds(5), cap: .milliseconds(10))
        let down = try RedisClusterClient(configuration: impatient)
        do {
            _ = try await down.send(["GET", RedisArgument(moving[0])])
            Issue.record("a slot nobody serves answered")
        } catch {
            #expect(error.code == .clusterUnavailable)
            #expect(error.isRetriable)
        }
        do {
            try await RedisLicenseStore(client: down).putPolicy(Array("{}".utf8), tenant: try StoreIdentifier("moving"), assetID: nil)
            Issue.record("a slot nobody serves took a write")
        } catch {
            #expect(error.code == .unavailable)
            #expect(error.isRetriable)
        }
    }

    @Test("a slot half migrated: ASK sends the moved keys, new keys and scripts to the importing node")
    func askDuringMigration() async throws {
        let cluster = try await RedisClusterProcess()
        defer { cluster.stop() }
        let client = try RedisClusterClient(configuration: cluster.configuration())
        let keys = (0..<6).map { "{asking}k\($0)" }
        let others = (0..<20).map { "other:\($0)" }
        _ = try await client.pipeline((keys + others).map { ["SET", RedisArgument($0), "1"] })
        let p = try await Self.pick(cluster, client, tag: "asking")
        _ = try await cluster.nodeClient(p.to).send(["CLUSTER", "SETSLOT", RedisArgument(p.slot), "IMPORTING", RedisArgument(p.fromID)])
        _ = try await cluster.nodeClient(p.from).send(["CLUSTER", "SETSLOT", RedisArgument(p.slot), "MIGRATING", RedisArgument(p.toID)])
        // Half the keys move; the slot stays MIGRATING/IMPORTING, so the old master answers ASK for them.
        try await Self.migrate(cluster, Array(keys.prefix(3)), from: p.from, to: p.to)
        // Increments by a script the importing node has never loaded (NOSCRIPT after ASKING), plain
        // commands, and a key that exists nowhere yet (created on the importing node).
        let script = RedisScript("return redis.call('INCRBY', KEYS[1], ARGV[1])")
        var commands: [RedisCommand] = keys.map { .evalScript(script, keys: [RedisArgument($0)], arguments: ["10"]) }
        commands += others.map { RedisCommand(["INCR", RedisArgument($0)]) }
        commands.append(RedisCommand(["SET", "{asking}new", "fresh"]))
        let replies = try await client.pipeline(commands)
        #expect(replies.prefix(keys.count) == ArraySlice(Array(repeating: RedisValue.integer(11), count: keys.count)))
        #expect(replies[keys.count..<(keys.count + others.count)] == ArraySlice(Array(repeating: RedisValue.integer(2), count: others.count)))
        #expect(replies.last == .simpleString("OK"))
        #expect(try await client.slotMap().master(for: p.slot)?.port == cluster.nodes[p.from].port, "ASK does not change the map")
        // The new key is on the importing node.
        let asked = try await cluster.nodeClient(p.to).pipeline([["ASKING"], ["GET", "{asking}new"]])
        #expect(asked[1].string == "fresh")
        // Finish the migration: everything answered from the new owner.
        try await Self.migrate(cluster, Array(keys.suffix(3)), from: p.from, to: p.to)
        for index in cluster.nodes.indices where try await cluster.role(index) == "master" {
            _ = try await cluster.nodeClient(index).send(["CLUSTER", "SETSLOT", RedisArgument(p.slot), "NODE", RedisArgument(p.toID)])
        }
        let after = try await client.pipeline((keys + ["{asking}new"]).map { ["GET", RedisArgument($0)] })
        #expect(after.map(\.string) == Array(repeating: "11", count: keys.count) + ["fresh"])
    }
}
