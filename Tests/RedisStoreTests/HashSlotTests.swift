import Licensing
import Testing

@testable import RedisStore

/// CRC16 hash slots and the key layout's promise: every key a script or transaction touches
/// together lives in one slot.
struct HashSlotTests {
    static func id(_ text: String) -> StoreIdentifier {
        // Test literals are valid by construction.
        try! StoreIdentifier(text)
    }

    @Test("CRC16-XMODEM and hash slots match Redis's own vectors")
    func vectors() {
        #expect(HashSlot.crc16(Array("123456789".utf8)) == 0x31C3)
        #expect(HashSlot.of("123456789") == 12739)
        #expect(HashSlot.of("foo") == 12182)
        #expect(HashSlot.of("") == 0)
    }

    @Test("a hash tag decides the slot: the first {...} if not empty, else the whole key")
    func hashTags() {
        #expect(HashSlot.of("{user1000}.following") == HashSlot.of("{user1000}.followers"))
        #expect(HashSlot.of("{user1000}.following") == HashSlot.of("user1000"))
        #expect(HashSlot.of("foo{}{bar}") == HashSlot.of("foo{}{bar}"))
        #expect(HashSlot.of("foo{}{bar}") != HashSlot.of("bar"), "an empty first tag: the whole key is hashed")
        #expect(HashSlot.of("foo{{bar}}zap") == HashSlot.of("{bar"))
        #expect(HashSlot.of("foo{bar}{zap}") == HashSlot.of("bar"))
    }

    @Test("every per-account key of one account lands in the account's slot")
    func accountFamilies() {
        let (t, a) = (Self.id("acme"), Self.id("alice"))
        let slot = HashSlot.of(RedisKeys.accountPrefix(t, account: a))
        let keys: [RedisArgument] = [
            RedisKeys.slots(t, account: a), RedisKeys.leaseRequest(t, account: a, requestID: Self.id("r1")),
            RedisKeys.slotStarts(t, account: a), RedisKeys.endedSlots(t, account: a), RedisKeys.devices(t, account: a),
            RedisKeys.rentals(t, account: a), RedisKeys.offline(t, account: a), RedisKeys.invalidated(t, account: a),
            RedisKeys.reply(t, account: a, jobID: Self.id("j1")), RedisKeys.rateCounter(t, account: a, window: 42),
        ]
        for key in keys { #expect(HashSlot.of(key.bytes) == slot, "\(key)") }
        // Another account of the same tenant is (almost surely) elsewhere: accounts spread.
        let others = (0..<50).map { HashSlot.of(RedisKeys.slots(t, account: Self.id("user\($0)")).bytes) }
        #expect(Set(others).count > 40)
    }

    @Test("every per-tenant key of one tenant lands in the tenant's slot")
    func tenantFamilies() {
        let t = Self.id("acme")
        let slot = HashSlot.of("t:acme")
        let asset = Array("skd://acme/live".utf8)
        let keys: [RedisArgument] = [
            RedisKeys.tenant(t), RedisKeys.contentKey(t, assetID: asset, keyPeriod: nil), RedisKeys.contentKey(t, assetID: asset, keyPeriod: Self.id("p1")),
            RedisKeys.policy(t, assetID: nil), RedisKeys.policy(t, assetID: asset), RedisKeys.policy(t, assetID: asset, keyPeriod: Self.id("p1")),
            RedisKeys.guardSettings(t), RedisKeys.rotation(t, assetID: asset), RedisKeys.viewers(t, assetID: asset),
        ]
        for key in keys { #expect(HashSlot.of(key.bytes) == slot, "\(key)") }
    }

    @Test("the keys outside tenant and account tags: SPC claims spread, the marker and the rotation index have a slot each")
    func otherFamilies() {
        let t = Self.id("acme")
        let claims = (0..<50).map { n in
            HashSlot.of(RedisKeys.spcClaim(t, transactionID: UInt64(n), digest: [UInt8(n), 1, 2]).bytes)
        }
        #expect(Set(claims).count > 40, "claims of one tenant spread over the cluster")
        #expect(
            HashSlot.of(RedisKeys.spcClaim(t, transactionID: 1, digest: [9]).bytes) == HashSlot.of(RedisKeys.spcClaim(t, transactionID: 2, digest: [9]).bytes))
        #expect(HashSlot.of(RedisKeys.provisioned.bytes) == HashSlot.of("store"))
        #expect(HashSlot.of(RedisKeys.rotationIndex.bytes) == HashSlot.of("fps:rotations"))
    }

    @Test("each script call's keys share one slot, and it is the slot the call is routed by")
    func scriptKeysShareOneSlot() {
        let (t, a) = (Self.id("acme"), Self.id("alice"))
        var lease = LeaseRequest(
            requestID: Self.id("r1"), tenant: t, account: a, deviceID: [1, 2], sessionID: 7,
            maxConcurrentStreams: 2, leaseDurationSeconds: 600, nowMilliseconds: 1_700_000_000_000,
            deviceLimit: 3, rentalAssetID: [5])
        lease.expectsLiveSlot = true
        var plainRenewal = lease
        plainRenewal.rentalAssetID = nil
        let member = lease.slotMember
        let calls: [RedisCommand] = [
            LeaseScriptCall(lease, member: member).command,
            RenewalScriptCall(plainRenewal, member: member)?.command,
            AdmissionScriptCall(
                replyKey: RedisKeys.reply(t, account: a, jobID: Self.id("j")), counterKey: RedisKeys.rateCounter(t, account: a, window: 1),
                counterTTLMilliseconds: 2
            ).command,
            ClaimScriptCall(claimKey: RedisKeys.spcClaim(t, transactionID: 1, digest: [1]), jobID: "j", windowMilliseconds: 1).command,
            StoreReplyScriptCall(replyKey: RedisKeys.reply(t, account: a, jobID: Self.id("j")), reply: [1], ttlMilliseconds: 1).command,
        ].compactMap { $0 }
        #expect(calls.count == 5)
        for call in calls {
            let keyCount = Int(String(decoding: call.arguments.argument(at: 0) ?? [], as: UTF8.self)) ?? 0
            #expect(keyCount > 0)
            let slots = Set((1...keyCount).compactMap { call.arguments.argument(at: $0) }.map { HashSlot.of($0) })
            #expect(slots.count == 1)
            #expect(call.routingKey.map { HashSlot.of($0) } == slots.first)
        }
    }

    @Test("CLUSTER SHARDS after a failover: the online master owns the shard's slots, not a failed one listed first")
    func shardsPreferTheOnlineMaster() throws {
        func node(_ port: Int64, _ role: String, _ health: String) -> RedisValue {
            .array([
                .bulkString(Array("port".utf8)), .integer(port), .bulkString(Array("ip".utf8)), .bulkString(Array("127.0.0.1".utf8)),
                .bulkString(Array("endpoint".utf8)), .bulkString(Array("127.0.0.1".utf8)), .bulkString(Array("role".utf8)), .bulkString(Array(role.utf8)),
                .bulkString(Array("health".utf8)), .bulkString(Array(health.utf8)),
            ])
        }
        let shard = RedisValue.array([
            .bulkString(Array("slots".utf8)), .array([.integer(0), .integer(16383)]),
            .bulkString(Array("nodes".utf8)), .array([node(7000, "master", "fail"), node(7001, "master", "online"), node(7002, "replica", "online")]),
        ])
        let map = try ClusterSlotMap(shards: .array([shard]))
        #expect(map.master(for: 0) == RedisNodeAddress(host: "127.0.0.1", port: 7001))
        #expect(map.master(for: 16383) == RedisNodeAddress(host: "127.0.0.1", port: 7001))
    }

    @Test("plain commands route by their first key; keyless ones by none")
    func routingKeys() {
        #expect(RedisCommand(["GET", "{a}x"]).routingKey.map { Array($0) } == Array("{a}x".utf8))
        #expect(RedisCommand(["hgetall", "k"]).routingKey.map { Array($0) } == Array("k".utf8))
        #expect(RedisCommand(["MULTI"]).routingKey == nil)
        #expect(RedisCommand(["SCAN", "0"]).routingKey == nil)
        #expect(RedisCommand.evalScript(RedisScript("return 1"), keys: [], arguments: ["x"]).routingKey == nil)
    }
}
