import KSMTestSupport
import Licensing
import Testing

@testable import RedisStore

/// The renewal script is a shortcut, never a second opinion: a request that says it holds a live
/// slot (`expectsLiveSlot`) must leave Redis exactly as the lease script leaves it and get the same
/// answer, whether the shortcut took it or declined it to the lease script.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct RenewalScriptTests {
    private static let t0: Int64 = 1_700_000_000_000
    private static func sid(_ text: String) -> StoreIdentifier { try! StoreIdentifier(text) }  // test literals are valid

    private static func lease(
        _ request: String, account: String = "alice", device: UInt8 = 1, session: UInt64 = 1, limit: Int = 2, seconds: UInt32 = 600,
        at now: Int64, endOldest: Bool = false, deviceLimit: Int? = nil, rental: Bool = false
    ) -> LeaseRequest {
        LeaseRequest(
            requestID: sid(request), tenant: sid("acme"), account: sid(account), deviceID: Array(repeating: device, count: 20), sessionID: session,
            maxConcurrentStreams: limit, leaseDurationSeconds: seconds, nowMilliseconds: now, endOldestWhenFull: endOldest,
            deviceLimit: deviceLimit, rentalAssetID: rental ? Array("asset-1".utf8) : nil)
    }

    /// A history written before the renewal under test, and the batch under test (sent with the hint).
    struct Scenario: Sendable, CustomTestStringConvertible {
        var name: String
        var history: [[LeaseRequest]]
        var batch: [LeaseRequest]
        /// Script calls the batch costs with the hint: one for a request the renewal script answers or
        /// is never offered (not a plain renewal, or its account has other requests in the batch), two
        /// for one it declines to the lease script.
        var hintedScriptCalls: Int
        var testDescription: String { name }
    }

    static let scenarios: [Scenario] = [
        Scenario(
            name: "live slot, no device registry",
            history: [[lease("g", at: t0)]], batch: [lease("r", at: t0 + 10_000)], hintedScriptCalls: 1),
        Scenario(
            name: "live slot, longer lease pushes the slot keys' TTL out",
            history: [[lease("g", seconds: 60, at: t0)]], batch: [lease("r", seconds: 3_600, at: t0 + 10_000)], hintedScriptCalls: 1),
        Scenario(
            name: "live slot that outlasts the renewal keeps its later expiry",
            history: [[lease("g", seconds: 3_600, at: t0)]], batch: [lease("r", seconds: 60, at: t0 + 10_000)], hintedScriptCalls: 1),
        Scenario(
            name: "live slot of a registered device",
            history: [[lease("g", at: t0, deviceLimit: 2)]], batch: [lease("r", at: t0 + 10_000, deviceLimit: 2)], hintedScriptCalls: 1),
        Scenario(
            name: "a replayed request ID gets its stored answer",
            history: [[lease("g", at: t0)], [lease("r", at: t0 + 10_000)]], batch: [lease("r", at: t0 + 20_000)], hintedScriptCalls: 1),
        Scenario(
            name: "a replayed refusal stays a refusal",
            history: [[lease("a", device: 1, limit: 1, at: t0)], [lease("b", device: 2, limit: 1, at: t0 + 1)]],
            batch: [lease("b", device: 2, limit: 1, at: t0 + 2)], hintedScriptCalls: 1),
        Scenario(
            name: "no slot at all: a grant",
            history: [], batch: [lease("r", at: t0)], hintedScriptCalls: 2),
        Scenario(
            name: "no slot and the account is full: a refusal",
            history: [[lease("a", device: 2, limit: 1, at: t0)]], batch: [lease("r", limit: 1, at: t0 + 1)], hintedScriptCalls: 2),
        Scenario(
            name: "an expired slot: a new grant, after the sweep",
            history: [[lease("g", seconds: 60, at: t0)]], batch: [lease("r", seconds: 60, at: t0 + 70_000)], hintedScriptCalls: 2),
        Scenario(
            name: "a slot ended by a newer stream is refused",
            history: [[lease("a", device: 1, limit: 1, at: t0, endOldest: true)], [lease("b", device: 2, limit: 1, at: t0 + 1, endOldest: true)]],
            batch: [lease("r", device: 1, limit: 1, at: t0 + 2, endOldest: true)], hintedScriptCalls: 2),
        Scenario(
            name: "a device the registry does not know yet is registered",
            history: [[lease("g", at: t0)]], batch: [lease("r", at: t0 + 10_000, deviceLimit: 2)], hintedScriptCalls: 2),
        Scenario(
            name: "a new device over the device limit is refused",
            history: [[lease("a", device: 2, at: t0, deviceLimit: 1)], [lease("g", device: 1, at: t0 + 1)]],
            batch: [lease("r", device: 1, at: t0 + 10_000, deviceLimit: 1)], hintedScriptCalls: 2),
        Scenario(
            name: "a renewal that starts a rental goes straight to the lease script",
            history: [[lease("g", at: t0)]], batch: [lease("r", at: t0 + 10_000, rental: true)], hintedScriptCalls: 1),
        Scenario(
            name: "an account with several requests in the batch takes no shortcut",
            history: [[lease("g1", device: 1, limit: 3, at: t0), lease("g2", device: 2, limit: 3, at: t0)]],
            batch: [
                lease("n3", device: 3, limit: 3, at: t0 + 5), lease("r1", device: 1, limit: 3, at: t0 + 5),
                lease("n4", device: 4, limit: 3, at: t0 + 5), lease("r2", device: 2, limit: 3, at: t0 + 5),
            ],
            hintedScriptCalls: 4),
        // Applied in order, the new stream ends the oldest and its renewal is refused; a shortcut
        // taken before the declined request would have renewed it.
        Scenario(
            name: "a new stream ending the oldest, then the oldest's renewal, in one batch",
            history: [[lease("a", device: 1, limit: 1, at: t0, endOldest: true)]],
            batch: [lease("x", device: 2, limit: 1, at: t0 + 5, endOldest: true), lease("r", device: 1, limit: 1, at: t0 + 5, endOldest: true)],
            hintedScriptCalls: 2),
        Scenario(
            name: "a batch of several accounts: each alone in it may take the shortcut",
            history: [[lease("ga", account: "alice", at: t0), lease("gb", account: "bob", at: t0)]],
            batch: [
                lease("ra", account: "alice", at: t0 + 5), lease("nb", account: "bob", session: 2, limit: 1, at: t0 + 5),
                lease("nc", account: "carol", at: t0 + 5),
            ],
            hintedScriptCalls: 5),
    ]

    @Test("a hinted renewal answers and writes exactly what the lease script does", arguments: RedisBackend.allCases, scenarios)
    func shortcutMatchesLeaseScript(_ backend: RedisBackend, _ scenario: Scenario) async throws {
        try await backend.withTwoSpaces { space in
            try await Self.compare(scenario, space)
        }
    }

    /// The same history in two key spaces; the batch with the hint in one, without it in the other.
    private static func compare(_ scenario: Scenario, _ space: (Int) async throws -> any RedisCommandRunner) async throws {
        var snapshots: [(contents: [String: String], ttls: [String: Int64], window: Int64)] = []
        for (index, hint) in [true, false].enumerated() {
            let client = try await space(index)
            // Both scripts loaded up front on every master, so every script call below is one EVALSHA.
            for node in try await client.masterClients() {
                for script in [LeaseScriptCall.script, RenewalScriptCall.script] {
                    _ = try await node.send(["SCRIPT", "LOAD", RedisArgument(script.source)])
                }
            }
            let store = RedisLicenseStore(client: client)
            let start = ContinuousClock.now
            for step in scenario.history { _ = try await store.acquireLeases(step) }
            // Records kept for long (the device registry: 400 days) are aged to one day, so that a
            // write of their retention by the batch shows in the TTLs compared below.
            for key in try await Self.allKeys(client) {
                _ = try await client.send(["PEXPIRE", RedisArgument(key), "86400000", "LT"])
            }
            for node in try await client.masterClients() { _ = try await node.send(["CONFIG", "RESETSTAT"]) }
            let batch = scenario.batch.map { request in
                var request = request
                request.expectsLiveSlot = hint
                return request
            }
            let results = try await store.acquireLeases(batch)
            let scriptCalls = try await Self.evalshaCalls(client)
            if hint {
                #expect(scriptCalls == scenario.hintedScriptCalls, "script calls")
            } else {
                #expect(scriptCalls == batch.count, "script calls")
            }
            // Compare answers across the two databases through the snapshot below.
            _ = try await client.send(["SET", "test:results", RedisArgument(results.map(\.encoded).joined(separator: ","))])
            let snapshot = try await Self.snapshot(client)
            let elapsed = (ContinuousClock.now - start).components
            snapshots.append((snapshot.contents, snapshot.ttls, elapsed.seconds * 1_000 + elapsed.attoseconds / 1_000_000_000_000_000 + 1))
        }
        let (a, b) = (snapshots[0], snapshots[1])
        #expect(a.contents == b.contents)
        #expect(a.contents["test:results"] != nil)
        for (key, ttl) in a.ttls {
            // Redis counts TTLs down in real time: a TTL read `ttl` was set to between `ttl` and `ttl`
            // plus the time since the database's first write. The two ranges must meet, however
            // long a loaded host took between the writes and the reads.
            let other = b.ttls[key] ?? -9
            #expect(ttl <= other + b.window && other <= ttl + a.window, "\(key): \(ttl) (+\(a.window)) against \(other) (+\(b.window))")
        }
        #expect(Set(a.ttls.keys) == Set(b.ttls.keys))
    }

    /// The second round trip fails after the first wrote its renewals: the batch fails as a whole,
    /// the renewals it wrote are idempotent, and the retried batch answers what one attempt would have.
    @Test("a failure in the lease script's round trip fails the batch, and its retry answers as one attempt would")
    func declinedRoundFailureIsRetriedWithoutChange() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let admin = try RedisClient(configuration: server.configuration())
        _ = try await RedisLicenseStore(client: admin).acquireLeases([Self.lease("g", at: Self.t0)])
        // The worker's user may run loaded scripts but not EVAL; with the lease script flushed and
        // only the renewal script loaded, the first round succeeds and the second is refused.
        _ = try await admin.send(["ACL", "SETUSER", "worker", "on", ">secret", "~*", "&*", "+@all", "-eval"])
        _ = try await admin.send(["SCRIPT", "FLUSH"])
        _ = try await admin.send(["SCRIPT", "LOAD", RedisArgument(RenewalScriptCall.script.source)])
        var configuration = server.configuration()
        configuration.username = "worker"
        configuration.password = "secret"
        let store = RedisLicenseStore(client: try RedisClient(configuration: configuration))
        let batch = [Self.lease("r", at: Self.t0 + 10_000), Self.lease("n", account: "bob", at: Self.t0 + 10_000)].map { request in
            var request = request
            request.expectsLiveSlot = true
            return request
        }

        await #expect(throws: LicenseStoreError.self) { try await store.acquireLeases(batch) }
        // The first round's renewal stands; the declined request wrote nothing.
        let slots = RedisKeys.slots(Self.sid("acme"), account: Self.sid("alice"))
        let member = RedisArgument(batch[0].slotMember)
        #expect(try await admin.send(["ZSCORE", slots, member]).integerValue == Self.t0 + 610_000)
        #expect(try await admin.send(["EXISTS", RedisKeys.slots(Self.sid("acme"), account: Self.sid("bob"))]).integerValue == 0)

        _ = try await admin.send(["ACL", "SETUSER", "worker", "+eval"])
        #expect(
            try await store.acquireLeases(batch) == [.renewed(expiresAtMilliseconds: Self.t0 + 610_000), .granted(expiresAtMilliseconds: Self.t0 + 610_000)])
        // A third delivery replays both stored answers.
        #expect(
            try await store.acquireLeases(batch) == [.renewed(expiresAtMilliseconds: Self.t0 + 610_000), .granted(expiresAtMilliseconds: Self.t0 + 610_000)])
    }

    /// EVALSHA calls since the last `CONFIG RESETSTAT`, summed over every master.
    private static func evalshaCalls(_ client: any RedisCommandRunner) async throws -> Int {
        var total = 0
        for node in try await client.masterClients() {
            let info = try await node.send(["INFO", "commandstats"]).string ?? ""
            guard let line = info.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("cmdstat_evalsha:") }),
                let field = line.split(separator: ",").first(where: { $0.hasPrefix("cmdstat_evalsha:calls=") })
            else { continue }
            total += Int(field.dropFirst("cmdstat_evalsha:calls=".count)) ?? -1
        }
        return total
    }

    /// Every key, from every master.
    private static func allKeys(_ client: any RedisCommandRunner) async throws -> [String] {
        var keys: [String] = []
        for node in try await client.masterClients() {
            keys += try await node.send(["KEYS", "*"]).arrayValue?.compactMap(\.string) ?? []
        }
        return keys
    }

    /// Every key of the client's key space: its contents in a canonical form, and its TTL.
    private static func snapshot(_ client: any RedisCommandRunner) async throws -> (contents: [String: String], ttls: [String: Int64]) {
        var contents: [String: String] = [:]
        var ttls: [String: Int64] = [:]
        let keys = try await allKeys(client)
        for key in keys {
            let name = RedisArgument(key)
            let type = try await client.send(["TYPE", name]).string ?? "?"
            let value: RedisValue
            switch type {
            case "string": value = try await client.send(["GET", name])
            case "zset": value = try await client.send(["ZRANGE", name, "0", "-1", "WITHSCORES"])
            case "hash": value = try await client.send(["HGETALL", name])
            case "set": value = try await client.send(["SMEMBERS", name])
            default: value = .error("unexpected type \(type)")
            }
            var items = value.arrayValue.map { $0.compactMap(\.string) } ?? [value.string ?? "\(value)"]
            if type == "hash" {  // field=value pairs
                items = stride(from: 0, to: items.count - 1, by: 2).map { items[$0] + "=" + items[$0 + 1] }
            }
            // Sets and hashes come back in no fixed order.
            contents[key] = type + ":" + (type == "zset" ? items : items.sorted()).joined(separator: "|")
            let ttl = try await client.send(["PTTL", name]).integerValue ?? -9
            if ttl >= 0 { ttls[key] = ttl }
        }
        return (contents, ttls)
    }
}
