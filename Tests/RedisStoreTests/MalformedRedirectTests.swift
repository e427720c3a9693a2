import Testing

@testable import RedisStore

/// `MOVED` and `ASK` are followed only when they name a slot in 0...16383 and a `host:port` a
/// connection can be opened to; any other shape is an error for that command, never a trap and
/// never a resend to garbage.
@Suite(.timeLimit(.minutes(1)))
struct MalformedRedirectTests {
    @Test("Well-formed redirects parse: IPv4, hostnames, bracketed and bare IPv6, every slot bound")
    func wellFormed() throws {
        #expect(
            try ClusterRedirect.parse(.error("MOVED 3999 127.0.0.1:6381"))?.kind == .moved(slot: 3999, node: RedisNodeAddress(host: "127.0.0.1", port: 6381)))
        #expect(
            try ClusterRedirect.parse(.error("ASK 0 redis-2.internal:7000"))?.kind
                == .ask(slot: 0, node: RedisNodeAddress(host: "redis-2.internal", port: 7000)))
        #expect(try ClusterRedirect.parse(.error("MOVED 16383 [::1]:6379"))?.kind == .moved(slot: 16383, node: RedisNodeAddress(host: "::1", port: 6379)))
        #expect(try ClusterRedirect.parse(.error("MOVED 1 fe80::1:65535"))?.kind == .moved(slot: 1, node: RedisNodeAddress(host: "fe80::1", port: 65535)))
        #expect(try ClusterRedirect.parse(.error("TRYAGAIN Multiple keys request during rehashing of slot"))?.kind == .tryAgain)
        #expect(try ClusterRedirect.parse(.error("CLUSTERDOWN The cluster is down"))?.kind == .clusterDown)
    }

    @Test(
        "Replies that are not redirects are not parsed as one",
        arguments: [
            RedisValue.error("ERR unknown command"), .error(""), .error(" MOVED 1 h:1"), .error("MOVEDX 1 h:1"),
            .simpleString("MOVED 1 h:1"), .bulkString(Array("MOVED 1 h:1".utf8)), .null, .integer(1), .array([.error("MOVED 1 h:1")]),
        ])
    func notRedirects(value: RedisValue) throws {
        #expect(try ClusterRedirect.parse(value) == nil)
    }

    @Test(
        "A MOVED or ASK with a garbage slot or address is an error naming what is wrong",
        arguments: [
            ("MOVED", "expected MOVED <slot> <host:port>"),
            ("MOVED 12", "expected MOVED <slot> <host:port>"),
            ("ASK x 127.0.0.1:6379", "slot is not in 0...16383"),
            ("MOVED -1 127.0.0.1:6379", "slot is not in 0...16383"),
            ("MOVED 16384 127.0.0.1:6379", "slot is not in 0...16383"),
            ("MOVED 9223372036854775807 127.0.0.1:6379", "slot is not in 0...16383"),
            ("MOVED 99999999999999999999999 127.0.0.1:6379", "slot is not in 0...16383"),
            ("MOVED 1 127.0.0.1", "target is not host:port"),
            ("MOVED  1 127.0.0.1:6379", "slot is not in 0...16383"),
            ("MOVED 1 127.0.0.1:", "target is not host:port"),
            ("MOVED 1 127.0.0.1:0", "target is not host:port"),
            ("MOVED 1 127.0.0.1:-6379", "target is not host:port"),
            ("ASK 1 127.0.0.1:65536", "target is not host:port"),
            ("MOVED 1 127.0.0.1:99999999999999999999", "target is not host:port"),
            ("MOVED 1 :6379", "target is not host:port"),
            ("MOVED 1 []:6379", "target is not host:port"),
            ("ASK 1 ?:6379", "target is not host:port"),
            ("MOVED 1 h\u{0}:6379", "target is not host:port"),
        ])
    func malformed(message: String, problem: String) throws {
        let error = try #require(throws: RedisError.self) { try ClusterRedirect.parse(.error(message)) }
        #expect(error.code == .unexpectedReply)
        #expect(error.message.hasPrefix("malformed \(message.prefix { $0 != " " }) redirect ("), "\(error.message)")
        #expect(error.message.contains(problem), "\(error.message)")
        #expect(error.message.hasSuffix(message))
    }

    @Test("A node answering a malformed MOVED fails that command with the reason; nothing is resent")
    func clusterClientDoesNotFollowGarbage() async throws {
        let node = try ScriptedRedisNode { command, port in
            switch command.first?.uppercased() {
            case "CLUSTER": .bytes(ScriptedRedisNode.shardsReply(masterPort: port))
            case "GET": .bytes(Array("-MOVED 70000 127.0.0.1:0\r\n".utf8))
            default: .bytes(Array("+OK\r\n".utf8))
            }
        }
        defer { node.stop() }
        var configuration = RedisClusterConfiguration(seeds: [node.address])
        configuration.node.commandTimeout = .seconds(5)
        let client = try RedisClusterClient(configuration: configuration)
        let replies = try await client.pipeline([RedisCommand(["GET", "k"]), RedisCommand(["SET", "k", "v"])])
        guard case .error(let message) = replies[0] else {
            Issue.record("expected an error reply, got \(replies[0])")
            return
        }
        #expect(message.hasPrefix("malformed MOVED redirect (slot is not in 0...16383)"))
        #expect(replies[1] == .simpleString("OK"))
        #expect(try await client.slotMap().masters == [node.address])
        let error = try await #require(throws: RedisError.self) { try await client.send(["GET", "k"]) }
        #expect(error.code == .serverError && !error.isRetriable)
    }
}
