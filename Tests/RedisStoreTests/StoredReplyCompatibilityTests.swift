import KSMTestSupport
import Licensing
@testable import RedisStore
import Testing

/// Stored replies through `SET ... NX PX ... GET` (Redis 7.0+) and through the script older servers
/// get: the same answers either way.
@Suite struct StoredReplyCompatibilityTests {
    private static func reply(_ job: String, _ bytes: [UInt8]) throws -> StoredReply {
        StoredReply(tenant: try StoreIdentifier("acme"), account: try StoreIdentifier("alice"), jobID: try StoreIdentifier(job), bytes: bytes, ttlMilliseconds: 60_000)
    }

    @Test("stores once and returns the first bytes after, with the plain command and with the script", arguments: [false, true])
    func firstWriterWins(script: Bool) async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let store = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        if script { store.compatibility.refuseSetNXGet() }
        #expect(store.compatibility.usesSetNXGet == !script)
        #expect(try await store.storeReplies([try Self.reply("j1", [1, 2, 3]), try Self.reply("j2", [9])]) == [nil, nil])
        #expect(try await store.storeReplies([try Self.reply("j1", [4, 5, 6]), try Self.reply("j3", [7])]) == [[1, 2, 3], nil])
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
