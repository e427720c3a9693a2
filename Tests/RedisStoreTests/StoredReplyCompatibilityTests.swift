import KSMTestSupport
import Licensing
import Testing

@testable import RedisStore

/// Stored replies through `SET ... NX PX ... GET` (Redis 7.0+) and through the script older servers
/// get: the same answers either way.
@Suite struct StoredReplyCompatibilityTests {
    private static let digest = [UInt8](repeating: 0xD1, count: 32)

    private static func reply(_ job: String, _ bytes: [UInt8], digest: [UInt8]? = digest) throws -> StoredReply {
        StoredReply(
            tenant: try StoreIdentifier("acme"), account: try StoreIdentifier("alice"), jobID: try StoreIdentifier(job),
            answer: StoredAnswer(bytes: bytes, requestDigest: digest), ttlMilliseconds: 60_000)
    }

    private static func answer(_ bytes: [UInt8], digest: [UInt8]? = digest) -> StoredAnswer? { StoredAnswer(bytes: bytes, requestDigest: digest) }

    @Test("stores once and returns the first bytes after, with the plain command and with the script", arguments: [false, true])
    func firstWriterWins(script: Bool) async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let store = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        if script { store.compatibility.refuseSetNXGet() }
        #expect(store.compatibility.usesSetNXGet == !script)
        #expect(try await store.storeReplies([try Self.reply("j1", [1, 2, 3]), try Self.reply("j2", [9])]) == [nil, nil])
        #expect(try await store.storeReplies([try Self.reply("j1", [4, 5, 6]), try Self.reply("j3", [7])]) == [Self.answer([1, 2, 3]), nil])
        let ttl = try await RedisClient(configuration: server.configuration()).send(["PTTL", "fps:{t:acme:a:alice}:reply:j1"]).integerValue ?? -2
        #expect(ttl > 0 && ttl <= 60_000)
    }

    @Test("recognises the syntax error an older server gives for SET ... NX ... GET")
    func syntaxError() {
        #expect(RedisCompatibility.isSyntaxError(.error("ERR syntax error")))
        #expect(!RedisCompatibility.isSyntaxError(.error("WRONGTYPE Operation against a key holding the wrong kind of value")))
        #expect(!RedisCompatibility.isSyntaxError(.null))
    }
}

extension StoredReplyCompatibilityTests {
    @Test("a refused SET NX GET in the middle of a batch is redone by the script alone; the others stand")
    func partialRefusalKeepsTheOthers() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let store = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        let client = try RedisClient(configuration: server.configuration())
        // A key of the wrong type makes exactly one SET fail (WRONGTYPE), like a refused command.
        _ = try await client.send(["LPUSH", "fps:{t:acme:a:alice}:reply:bad", "x"])
        await #expect(throws: LicenseStoreError.self) {
            _ = try await store.storeReplies([try Self.reply("ok-1", [1]), try Self.reply("bad", [2]), try Self.reply("ok-2", [3])])
        }
        // The two good ones were stored by SET and are not reported as someone else's: a retry of the
        // batch sees its own bytes as stored earlier, and the plain path is still in use.
        #expect(store.compatibility.usesSetNXGet, "WRONGTYPE is not a syntax error: no downgrade")
        #expect(try await store.storeReplies([try Self.reply("ok-1", [9]), try Self.reply("ok-2", [9])]) == [Self.answer([1]), Self.answer([3])])
    }
}

extension StoredReplyCompatibilityTests {
    @Test("the request digest is kept with the reply and read back by admit; a bare reply of an earlier release has none")
    func digestTravelsWithTheReply() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let store = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        #expect(try await store.storeReplies([try Self.reply("j1", Array("{\"id\":\"j1\"}".utf8))]) == [nil])
        // Stored by an earlier release: the bare reply bytes.
        _ = try await RedisClient(configuration: server.configuration()).send(["SET", "fps:{t:acme:a:alice}:reply:old", "{\"id\":\"old\"}"])
        let admitted = try await store.admit(
            [
                AdmissionRequest(
                    tenant: try StoreIdentifier("acme"), account: try StoreIdentifier("alice"), jobID: try StoreIdentifier("j1"), countsTowardRate: false),
                AdmissionRequest(tenant: try StoreIdentifier("acme"), account: try StoreIdentifier("alice"), jobID: try StoreIdentifier("old")),
            ], nowMilliseconds: 1_700_000_000_000, rateWindowMilliseconds: 1000)
        #expect(
            admitted.admissions == [
                .stored(StoredAnswer(bytes: Array("{\"id\":\"j1\"}".utf8), requestDigest: Self.digest)),
                .stored(StoredAnswer(bytes: Array("{\"id\":\"old\"}".utf8), requestDigest: nil)),
            ])
        #expect(
            try await store.storeReplies([try Self.reply("old", [1], digest: [UInt8](repeating: 7, count: 32))]) == [
                Self.answer(Array("{\"id\":\"old\"}".utf8), digest: nil)
            ])
    }
}
