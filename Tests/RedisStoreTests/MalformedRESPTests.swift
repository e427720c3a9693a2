import Foundation
import Synchronization
import Testing

@testable import RedisStore

/// Bytes that are not RESP, and RESP that asks for more than a worker should give, are a thrown
/// `.unexpectedReply` from hiredis's reader and the copy into ``RedisValue`` (the path every
/// production reply takes): never a trap, never an allocation the bytes did not pay for.
@Suite(.timeLimit(.minutes(1)))
struct MalformedRESPTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("Well-formed replies of every RESP2 type copy exactly, extremes included")
    func wellFormed() throws {
        let stream =
            "+OK\r\n-ERR wrong\r\n:-9223372036854775808\r\n:9223372036854775807\r\n$-1\r\n*-1\r\n*0\r\n$0\r\n\r\n$4\r\n\u{0}\r\n\u{7F}\r\n*2\r\n*1\r\n:1\r\n$1\r\nx\r\n"
        let replies = try HiredisReader.replies(in: Self.bytes(stream))
        #expect(
            replies == [
                .simpleString("OK"), .error("ERR wrong"), .integer(.min), .integer(.max), .null, .null, .array([]), .bulkString([]),
                .bulkString([0, 13, 10, 0x7F]), .array([.array([.integer(1)]), .bulkString(Self.bytes("x"))]),
            ])
    }

    @Test(
        "Malformed RESP is an error with hiredis's reason",
        arguments: [
            ("*-2\r\n", "Multi-bulk length out of range"),
            ("*2147483648\r\n", "Multi-bulk length out of range"),
            ("*4294967297\r\n:1\r\n", "Multi-bulk length out of range"),
            ("*-9223372036854775808\r\n", "Multi-bulk length out of range"),
            ("*3x\r\n", "Bad multi-bulk length"),
            ("$-2\r\n", "Bulk string length out of range"),
            ("$18446744073709551615\r\n", "Bad bulk string length"),
            ("$1x\r\na\r\n", "Bad bulk string length"),
            (":abc\r\n", "Bad integer value"),
            (":99999999999999999999\r\n", "Bad integer value"),
            ("%1\r\n", "Protocol error"),
            ("~1\r\n", "Protocol error"),
            ("\r\n", "Protocol error"),
            (String(repeating: "*1\r\n", count: 9) + ":1\r\n", "depth > 7"),
        ])
    func malformed(stream: String, reason: String) throws {
        let error = try #require(throws: RedisError.self) { try HiredisReader.replies(in: Self.bytes(stream)) }
        #expect(error.code == .unexpectedReply)
        #expect(error.message.hasPrefix("malformed reply: "))
        #expect(error.message.contains(reason), "\(error.message)")
    }

    @Test("After a protocol error the reader keeps failing, even when fed good bytes")
    func errorIsSticky() throws {
        let reader = try #require(HiredisReader())
        try reader.feed(Self.bytes("+OK\r\n%1\r\n"))
        #expect(try reader.next() == .simpleString("OK"))
        let first = try #require(throws: RedisError.self) { try reader.next() }
        #expect(throws: first) { try reader.feed(Self.bytes("+OK\r\n")) }
        #expect(throws: first) { try reader.next() }
    }

    @Test("Arrays nested past the copy's limit are an error, not a deeper recursion")
    func nestingLimit() throws {
        let deepest = String(repeating: "*1\r\n", count: 8) + ":1\r\n"
        #expect(try HiredisReader.replies(in: Self.bytes(deepest)).count == 1)
        let reader = try #require(HiredisReader(maximumNesting: 2))
        try reader.feed(Self.bytes("*1\r\n*1\r\n*1\r\n:1\r\n"))
        let error = try #require(throws: RedisError.self) { try reader.next() }
        #expect(error.code == .unexpectedReply)
        #expect(error.message.contains("an array nested deeper than 2 levels"), "\(error.message)")
    }

    @Test("Every proper prefix of a real reply is incomplete, not an error; the whole is one reply")
    func prefixesWait() throws {
        let whole = try ReplySeeds.bytes("cluster-shards")
        for length in 0..<whole.count {
            #expect(try HiredisReader.replies(in: Array(whole[..<length])).isEmpty, "prefix of \(length) bytes")
        }
        #expect(try HiredisReader.replies(in: whole) == [try ReplySeeds.value("cluster-shards")])
    }

    @Test("A declared string length no bytes back is waited for, without allocating it")
    func hugeDeclaredLength() throws {
        #expect(try HiredisReader.replies(in: Self.bytes("$9223372036854775807\r\n")).isEmpty)
        #expect(try HiredisReader.replies(in: Self.bytes("*\(HiredisReplyLimits.maximumElements)\r\n:1\r\n:2\r\n")).isEmpty)
    }

    @Test(
        "An array header past the element bound is refused before hiredis allocates it",
        arguments: [
            "*\(HiredisReplyLimits.maximumElements + 1)\r\n", "*2147483647\r\n:1\r\n", "*1\r\n*2147483647\r\n",
        ])
    func hugeArrayHeader(stream: String) throws {
        let clock = ContinuousClock()
        var caught: RedisError?
        let elapsed = clock.measure { caught = #expect(throws: RedisError.self) { try HiredisReader.replies(in: Self.bytes(stream)) } }
        let error = try #require(caught)
        #expect(error.message == "malformed reply: an array longer than 1048576 elements, or hiredis ran out of memory")
        // Allocating and freeing 16 GiB takes seconds of CPU; a refused header takes microseconds. The
        // bound leaves a loaded CI host a wide margin.
        #expect(elapsed < .seconds(5))
    }

    // MARK: Through a socket

    @Test("A server answering bytes that are not RESP fails the command; the next one reconnects")
    func protocolErrorOnTheWire() async throws {
        let answered = ManagedCount()
        let node = try ScriptedRedisNode { _, _ in
            answered.increment() == 1 ? .bytes(Self.bytes("%3\r\n")) : .bytes(Self.bytes("+PONG\r\n"))
        }
        defer { node.stop() }
        let client = try RedisClient(configuration: RedisClientConfiguration(host: "127.0.0.1", port: node.port))
        let error = try await #require(throws: RedisError.self) { try await client.send(["PING"]) }
        #expect(error.code == .unexpectedReply && error.isRetriable)
        #expect(error.message.contains("malformed reply: Protocol error"), "\(error.message)")
        #expect(try await client.send(["PING"]) == .simpleString("PONG"))
    }

    @Test("A server's array header past the element bound fails the command at once")
    func hugeArrayOnTheWire() async throws {
        let node = try ScriptedRedisNode { _, _ in .bytes(Self.bytes("*2147483647\r\n:1\r\n")) }
        defer { node.stop() }
        let client = try RedisClient(configuration: RedisClientConfiguration(host: "127.0.0.1", port: node.port))
        let error = try await #require(throws: RedisError.self) { try await client.send(["PING"]) }
        #expect(error.code == .unexpectedReply && error.message.contains("an array longer than 1048576 elements"), "\(error.message)")
    }

    @Test("A reply that never ends is cut off at the byte limit, not buffered without bound")
    func endlessReply() async throws {
        let node = try ScriptedRedisNode { _, _ in
            .endless(header: Self.bytes("$9223372036854775807\r\n"), body: [UInt8](repeating: UInt8(ascii: "x"), count: 65_536))
        }
        defer { node.stop() }
        var configuration = RedisClientConfiguration(host: "127.0.0.1", port: node.port)
        configuration.commandTimeout = .seconds(20)
        let client = try RedisClient(configuration: configuration)
        let error = try await #require(throws: RedisError.self) { try await client.send(["PING"]) }
        #expect(error.code == .unexpectedReply)
        #expect(error.message.contains("ran past \(HiredisContext.maximumReplyBytes) bytes"), "\(error.message)")
    }
}

/// A counter a scripted node's answer closure can share across threads.
final class ManagedCount: Sendable {
    private let value = Mutex(0)

    /// The count after adding one.
    func increment() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
}
