import Foundation
import KSMTestSupport
import Licensing
import Testing
import Wire

@testable import RedisStore

/// The server replies the worker reads (FuzzTesting/Seeds/FuzzRedisReply: `CLUSTER SHARDS` and
/// `CLUSTER SLOTS` captured from a Redis 7.0 cluster, redirects, lease script replies, stored
/// answers, hashes, `SCAN` pages), mutated by the thousand with a fixed seed: every mutant is read
/// or refused with a `RedisError` or the store's error, never a trap, and whatever is read keeps
/// its invariants. The libFuzzer target FuzzTesting/Sources/FuzzRedisReply explores the same
/// readers without a budget; CI runs this instead.
@Suite(.timeLimit(.minutes(3)))
///
/// The loops yield every 500 mutants: a test that holds one of the two cooperative threads for
/// seconds starves every async test of the suite beside it (their timing bounds then fail).
struct ReplyMutationTests {
    /// RESP fragments that random flips rarely make: extreme lengths and counts, every type byte.
    static let splices: [String] = [
        "*-1\r\n", "*0\r\n", "*1\r\n", "*2147483647\r\n", "*-2\r\n", "$-1\r\n", "$0\r\n\r\n", "$9223372036854775807\r\n", "$5\r\nslots\r\n",
        "$5\r\nnodes\r\n", "$4\r\nport\r\n", "$4\r\nrole\r\n", "$6\r\nmaster\r\n", "$1\r\n?\r\n", ":-1\r\n", ":0\r\n", ":16383\r\n", ":16384\r\n",
        ":65535\r\n", ":65536\r\n", ":9223372036854775807\r\n", ":-9223372036854775808\r\n", "+OK\r\n", "-MOVED 1 h:1\r\n", "%1\r\n", "\r\n",
        String(repeating: "*1\r\n", count: 9),
    ]

    static func mutate(_ seed: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = seed
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<8, using: &random) {
            case 0 where !bytes.isEmpty: bytes[position] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            case 1 where !bytes.isEmpty: bytes[position] = UInt8.random(in: 0...255, using: &random)
            case 2 where !bytes.isEmpty: bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...8, using: &random)))
            case 3: bytes.insert(contentsOf: Array(splices[Int.random(in: 0..<splices.count, using: &random)].utf8), at: position)
            case 4: bytes = Array(bytes.prefix(position))
            case 5 where !bytes.isEmpty:
                let end = min(bytes.count, position + Int.random(in: 1...40, using: &random))
                bytes.insert(contentsOf: bytes[position..<end], at: end)
            case 6 where !bytes.isEmpty:
                // A digit changed: lengths, counts, slots and ports move by a little or a lot.
                if let digit = bytes[position...].firstIndex(where: { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
                    bytes[digit] = UInt8(ascii: "0") + UInt8.random(in: 0...9, using: &random)
                }
            default: bytes.append(UInt8.random(in: 0...255, using: &random))
            }
        }
        return bytes
    }

    /// Replaces one node of the reply tree (depth-first position `target`) by a hostile value.
    static func mutate(_ value: RedisValue, _ random: inout SplitMix64) -> RedisValue {
        var remaining = Int.random(in: 0..<max(1, count(value)), using: &random)
        return replace(value, &remaining, &random)
    }

    static func count(_ value: RedisValue) -> Int {
        1 + (value.arrayValue?.reduce(0) { $0 + count($1) } ?? 0)
    }

    static let hostileIntegers: [Int64] = [0, -1, 1, 16383, 16384, 65535, 65536, .max, .min, Int64(Int16.max) + 1, Int64(Int32.max) + 1]
    static let hostileStrings: [String] = [
        "", "?", "master", "replica", "online", "failed", "slots", "nodes", "port", "tls-port", "ip", "endpoint",
        "role", "health", "h:1", "a b", "\u{0}", String(repeating: "x", count: 300), "-5", "16384", "99999999999999999999",
    ]

    private static func replace(_ value: RedisValue, _ remaining: inout Int, _ random: inout SplitMix64) -> RedisValue {
        if remaining == 0 {
            remaining = -1
            switch Int.random(in: 0..<7, using: &random) {
            case 0: return .integer(hostileIntegers[Int.random(in: 0..<hostileIntegers.count, using: &random)])
            case 1: return .bulkString(Array(hostileStrings[Int.random(in: 0..<hostileStrings.count, using: &random)].utf8))
            case 2: return .null
            case 3: return .array([])
            case 4: return .error("ERR nope")
            case 5:
                guard var elements = value.arrayValue, !elements.isEmpty else { return .array([value, value]) }
                elements.remove(at: Int.random(in: 0..<elements.count, using: &random))
                return .array(elements)
            default:
                guard var elements = value.arrayValue, !elements.isEmpty else { return .simpleString(value.string ?? "1") }
                let index = Int.random(in: 0..<elements.count, using: &random)
                elements.insert(elements[index], at: index)
                return .array(elements)
            }
        }
        remaining -= 1
        guard case .array(let elements) = value else { return value }
        var changed: [RedisValue] = []
        changed.reserveCapacity(elements.count)
        for element in elements {
            changed.append(remaining >= 0 ? replace(element, &remaining, &random) : element)
        }
        return .array(changed)
    }

    /// Records an issue only when `condition` fails: millions of passing checks through `#expect`
    /// would cost more than the readers they check.
    static func check(_ condition: Bool, _ message: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) {
        if !condition { Issue.record(Comment(rawValue: message()), sourceLocation: sourceLocation) }
    }

    /// Every reader of a server reply, on `value` and on its elements `levels` deep; each outcome
    /// checked. Returns how many readers accepted something.
    @discardableResult
    static func readEverything(_ value: RedisValue, levels: Int = 2) -> Int {
        var accepted = 0
        // A slot map is a whole reply, never an element of one.
        if levels == 2, value.arrayValue != nil {
            do {
                checkInvariants(try ClusterSlotMap(shards: value))
                accepted += 1
            } catch {
                check(error.code == .unexpectedReply && error.message.hasPrefix("CLUSTER SHARDS answered a malformed map: "), error.message)
            }
            do {
                checkInvariants(try ClusterSlotMap(slots: value))
                accepted += 1
            } catch {
                check(error.code == .unexpectedReply && error.message.hasPrefix("CLUSTER SLOTS answered a malformed map: "), error.message)
            }
        }
        do {
            if let redirect = try ClusterRedirect.parse(value) {
                accepted += 1
                if case .moved(let slot, let node) = redirect.kind {
                    check((0..<HashSlot.count).contains(slot) && (1...65535).contains(node.port) && RedisNodeAddress.isValidHost(node.host), redirect.message)
                } else if case .ask(let slot, let node) = redirect.kind {
                    check((0..<HashSlot.count).contains(slot) && (1...65535).contains(node.port) && RedisNodeAddress.isValidHost(node.host), redirect.message)
                }
            }
        } catch {
            check(error.code == .unexpectedReply && error.message.hasPrefix("malformed "), error.message)
        }
        if let text = value.string, let lease = LeaseResult(encoded: text) {
            accepted += 1
            check(LeaseResult(encoded: lease.encoded) == lease, "lease reply \(text) does not survive its own encoding")
        }
        if let bytes = value.bytes {
            let answer = StoredAnswer(redisValue: bytes)
            check(StoredAnswer(redisValue: answer.redisValue) == answer, "stored answer does not survive its own encoding")
            if answer.requestDigest != nil { accepted += 1 }
            if let member = value.string, LeaseSlot(member: member, expiresAtMilliseconds: 1) != nil { accepted += 1 }
        }
        guard let flat = value.arrayValue else { return accepted }
        if (try? RedisLicenseStore.decodeHash(value)) != nil { accepted += 1 }
        if (try? RedisLicenseStore.decodeGuardSettings(tenant, value)) != nil { accepted += 1 }
        if flat.count.isMultiple(of: 2) {
            var fields: [String: String] = [:]
            for pair in stride(from: 0, to: flat.count, by: 2) {
                if let name = flat[pair].string, let text = flat[pair + 1].string { fields[name] = text }
            }
            if let schedule = try? RotationSchedule(tenant: tenant, assetID: [1], fields: fields) {
                accepted += 1
                check((1...64).contains(schedule.keysPerViewer) && schedule.boundaryMilliseconds >= 0, "rotation schedule out of range")
            }
        }
        if levels > 0 {
            for element in flat { accepted += readEverything(element, levels: levels - 1) }
        }
        return accepted
    }

    static let tenant: StoreIdentifier = {
        do { return try StoreIdentifier("acme") } catch { preconditionFailure("a valid identifier") }
    }()

    /// A map that was read: every slot's master is listed, every master reachable in principle.
    static func checkInvariants(_ map: ClusterSlotMap) {
        check(map.masters.count <= HashSlot.count + 1, "\(map.masters.count) masters")
        check(map.masters.allSatisfy { (1...65535).contains($0.port) && RedisNodeAddress.isValidHost($0.host) }, "a master without a valid address")
        check(map.master(for: -1) == nil && map.master(for: HashSlot.count) == nil, "a slot outside the cluster has a master")
    }

    @Test("The seeds are read as they are: real cluster maps, redirects, lease replies")
    func seedsAreRead() throws {
        let seeds = try ReplySeeds.all()
        #expect(seeds.count >= 10)
        for (name, bytes) in seeds {
            let replies = try HiredisReader.replies(in: bytes)
            #expect(!replies.isEmpty, "\(name)")
            #expect(replies.reduce(0) { $0 + Self.readEverything($1) } > 0, "\(name)")
        }
    }

    @Test("30,000 seeded byte mutants of RESP streams: read or refused, never a trap")
    func byteMutants() async throws {
        var random = SplitMix64(state: 0x5EED_2E15)
        let seeds = try ReplySeeds.all().map(\.bytes)
        var refused = 0
        var replies = 0
        for round in 0..<30_000 {
            if round % 500 == 0 { await Task.yield() }
            let mutant = Self.mutate(seeds[round % seeds.count], &random)
            do {
                let values = try HiredisReader.replies(in: mutant)
                replies += values.count
                for value in values { Self.readEverything(value) }
            } catch {
                refused += 1
                Self.check(error.code == .unexpectedReply && error.message.hasPrefix("malformed reply: "), error.message)
            }
        }
        #expect(refused > 2_000 && replies > 10_000, "refused \(refused), replies \(replies)")
    }

    @Test("30,000 seeded structural mutants of cluster maps: a valid map or an error naming the shape")
    func structuralMutants() async throws {
        var random = SplitMix64(state: 0x5EED_C1A5)
        let maps = try ["cluster-shards", "cluster-shards-split", "cluster-slots", "cluster-slots-split"].map { name in try ReplySeeds.value(name) }
        var read = 0
        var refused = 0
        for round in 0..<30_000 {
            if round % 500 == 0 { await Task.yield() }
            var mutant = maps[round % maps.count]
            for _ in 0..<Int.random(in: 1...3, using: &random) { mutant = Self.mutate(mutant, &random) }
            let isShards = round % maps.count < 2
            do {
                let map = isShards ? try ClusterSlotMap(shards: mutant) : try ClusterSlotMap(slots: mutant)
                read += 1
                Self.checkInvariants(map)
            } catch {
                refused += 1
                Self.check(
                    error.code == .unexpectedReply
                        && error.message.hasPrefix(isShards ? "CLUSTER SHARDS answered a malformed map: " : "CLUSTER SLOTS answered a malformed map: "),
                    error.message)
            }
        }
        #expect(read > 3_000 && refused > 10_000, "read \(read), refused \(refused)")
    }

    @Test("20,000 seeded redirect and lease-reply texts: parsed within range or refused")
    func textMutants() async throws {
        var random = SplitMix64(state: 0x5EED_7E47)
        let texts = [
            "MOVED 12182 127.0.0.1:17003", "ASK 3999 [::1]:6379", "MOVED 0 redis-1.internal:7000", "g:1764300000000", "r:1764300120000",
            "x:tooManyStreams:2:2", "g:1764300000000:0a1b/ff", "h:1764300000000", "n",
        ].map { Array($0.utf8) }
        var parsed = 0
        for round in 0..<20_000 {
            if round % 500 == 0 { await Task.yield() }
            let mutant = Self.mutate(texts[round % texts.count], &random)
            parsed += Self.readEverything(.error(String(decoding: mutant, as: UTF8.self)))
            parsed += Self.readEverything(.bulkString(mutant))
        }
        #expect(parsed > 2_000, "parsed \(parsed)")
    }
}

/// The seed replies in FuzzTesting/Seeds/FuzzRedisReply, shared with the libFuzzer target's corpus.
enum ReplySeeds {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("FuzzTesting/Seeds/FuzzRedisReply")

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent("\(name).resp")))
    }

    /// The one reply in a seed file.
    static func value(_ name: String) throws -> RedisValue {
        let replies = try HiredisReader.replies(in: try bytes(name))
        guard replies.count == 1 else { throw RedisError(.unexpectedReply, "\(name).resp holds \(replies.count) replies", isRetriable: false) }
        return replies[0]
    }

    /// Every seed file, sorted by name.
    static func all() throws -> [(name: String, bytes: [UInt8])] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".resp") }.sorted()
        return try names.map { name in (name, Array(try Data(contentsOf: directory.appendingPathComponent(name)))) }
    }
}
