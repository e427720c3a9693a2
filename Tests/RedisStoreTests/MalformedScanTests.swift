import Testing

@testable import RedisStore

/// A server whose `SCAN` pages are malformed or never end, or whose counts no real set reaches:
/// the walk ends in an error and the slot gauge's sum stays a number, never a trap or a loop.
@Suite(.timeLimit(.minutes(1)))
struct MalformedScanTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func client(_ node: ScriptedRedisNode) throws -> RedisClient {
        try RedisClient(configuration: RedisClientConfiguration(host: "127.0.0.1", port: node.port))
    }

    @Test("A SCAN cursor that is not a decimal number is an error", arguments: ["abc", "-1", "", "18446744073709551616", "1e3"])
    func badCursor(cursor: String) async throws {
        let node = try ScriptedRedisNode { _, _ in .bytes(Self.bytes("*2\r\n$\(cursor.utf8.count)\r\n\(cursor)\r\n*0\r\n")) }
        defer { node.stop() }
        let error = try await #require(throws: RedisError.self) {
            try await Self.client(node).scanEveryMaster(match: "*") { _, _ in false }
        }
        #expect(error.code == .unexpectedReply)
        #expect(error.message == "SCAN answered a cursor that is not a decimal number")
    }

    @Test("A SCAN page of the wrong shape is an error", arguments: ["*1\r\n$1\r\n0\r\n", ":0\r\n", "*2\r\n$1\r\n0\r\n$0\r\n\r\n", "*2\r\n*0\r\n*0\r\n"])
    func badPage(reply: String) async throws {
        let node = try ScriptedRedisNode { _, _ in .bytes(Self.bytes(reply)) }
        defer { node.stop() }
        let error = try await #require(throws: RedisError.self) {
            try await Self.client(node).scanEveryMaster(match: "*") { _, _ in false }
        }
        #expect(error.message == "SCAN answered neither a cursor nor a key page")
    }

    @Test("A cursor that never comes back to 0 ends the walk at the page bound")
    func endlessCursor() async throws {
        let pages = ManagedCount()
        let node = try ScriptedRedisNode { _, _ in
            _ = pages.increment()
            return .bytes(Self.bytes("*2\r\n$1\r\n7\r\n*0\r\n"))
        }
        defer { node.stop() }
        let error = try await #require(throws: RedisError.self) {
            try await Self.client(node).scanEveryMaster(match: "*", maximumPages: 50) { _, _ in false }
        }
        #expect(error.message == "SCAN did not finish within 50 pages")
        #expect(pages.increment() == 51)
        #expect(RedisClient.maximumScanPages == 1 << 22)
    }

    @Test("Slot counts no real set reaches saturate the gauge's sum instead of trapping")
    func gaugeSaturates() async throws {
        let node = try ScriptedRedisNode { command, _ in
            switch command.first {
            case "SCAN": .bytes(Self.bytes("*2\r\n$1\r\n0\r\n*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"))
            default: .bytes(Self.bytes(":9223372036854775807\r\n"))
            }
        }
        defer { node.stop() }
        let sample = try await LeaseSlotGauge().count(client: Self.client(node), nowMilliseconds: 0)
        #expect(sample == LeaseSlotGauge.Sample(slots: .max, accounts: 3, isComplete: true))
    }
}
