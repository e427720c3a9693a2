import KSMTestSupport
import Testing

@testable import RedisStore

@Suite(.serialized, .timeLimit(.minutes(3)))
struct RedisClientTests {
    @Test func binarySafeSetGetRoundTrip() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let client = try RedisClient(configuration: server.configuration())
        // Every byte value, NULs and CR/LF included, in the key and the value; plus an empty value.
        let value = (0...255).map { UInt8($0) } + [0, 0, 13, 10, 0]
        let key: [UInt8] = [0x00, 0x7B, 0x0D, 0x0A, 0xFF]
        #expect(try await client.send(["SET", RedisArgument(key), RedisArgument(value)]) == .simpleString("OK"))
        #expect(try await client.send(["GET", RedisArgument(key)]) == .bulkString(value))
        #expect(try await client.send(["SET", "empty", ""]) == .simpleString("OK"))
        #expect(try await client.send(["GET", "empty"]) == .bulkString([]))
        #expect(try await client.send(["GET", "missing"]) == .null)
        #expect(try await client.send(["INCRBY", "n", 41]) == .integer(41))
        let list = try await client.send(["RPUSH", "l", "a", "b"])
        #expect(list == .integer(2))
        #expect(try await client.send(["LRANGE", "l", 0, -1]) == .array([.bulkString(Array("a".utf8)), .bulkString(Array("b".utf8))]))
    }

    @Test func pipelineOfThousandCommands() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let client = try RedisClient(configuration: server.configuration())
        let sets = (0..<1000).map { i -> [RedisArgument] in ["SET", RedisArgument("k\(i)"), RedisArgument("v\(i)")] }
        let setReplies = try await client.pipeline(sets)
        #expect(setReplies.count == 1000)
        #expect(setReplies.allSatisfy { $0 == .simpleString("OK") })
        let gets = (0..<1000).map { i -> [RedisArgument] in ["GET", RedisArgument("k\(i)")] }
        let values = try await client.pipeline(gets)
        #expect(values == (0..<1000).map { .bulkString(Array("v\($0)".utf8)) })
    }

    @Test func errorRepliesThrowOrComeBackInPipelines() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let client = try RedisClient(configuration: server.configuration())
        _ = try await client.send(["SET", "s", "x"])
        do {
            _ = try await client.send(["LPUSH", "s", "y"])
            Issue.record("WRONGTYPE did not throw")
        } catch {
            #expect(error.code == .serverError)
            #expect(error.message.hasPrefix("WRONGTYPE"))
            #expect(!error.isRetriable)
        }
        let replies = try await client.pipeline([["LPUSH", "s", "y"], ["GET", "s"]])
        guard case .error(let message) = replies[0] else {
            Issue.record("expected an error value, got \(replies[0])")
            return
        }
        #expect(message.hasPrefix("WRONGTYPE"))
        #expect(replies[1] == .bulkString(Array("x".utf8)))
    }

    @Test func evalSHAFallsBackAfterScriptFlush() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let client = try RedisClient(configuration: server.configuration(poolSize: 1))
        let script = RedisScript("return redis.call('INCRBY', KEYS[1], ARGV[1])")
        #expect(try await client.evalScript(script, keys: ["c"], args: [2]) == .integer(2))
        let sha = try #require(script.sha1)
        #expect(try await client.send(["SCRIPT", "EXISTS", RedisArgument(sha)]) == .array([.integer(1)]))

        _ = try await client.send(["SCRIPT", "FLUSH"])
        #expect(try await client.evalScript(script, keys: ["c"], args: [3]) == .integer(5))
        // EVAL put it back in the server's cache.
        #expect(try await client.send(["SCRIPT", "EXISTS", RedisArgument(sha)]) == .array([.integer(1)]))

        // The same inside a pipeline, mixed with plain commands.
        _ = try await client.send(["SCRIPT", "FLUSH"])
        let replies = try await client.pipeline([
            .evalScript(script, keys: ["c"], arguments: [1]),
            RedisCommand(["GET", "c"]),
            .evalScript(script, keys: ["c"], arguments: [1]),
        ])
        // The documented caveat: script calls that fell back to EVAL run in a second round trip,
        // after the plain commands of the pipeline (in their own order among themselves).
        #expect(replies == [.integer(6), .bulkString(Array("5".utf8)), .integer(7)])
        #expect(try await client.send(["GET", "c"]) == .bulkString(Array("7".utf8)))

        // A script error is a non-retriable server error.
        let broken = RedisScript("return redis.call('NOSUCHCOMMAND')")
        await #expect(throws: RedisError.self) { _ = try await client.evalScript(broken, keys: [], args: []) }
    }

    @Test func authWithRequirepassAndSelectDatabase() async throws {
        let server = try await RedisServerProcess(password: "s3cret")
        defer { server.stop() }
        var configuration = try RedisClientConfiguration(url: "redis://:s3cret@127.0.0.1:\(server.port)/3")
        configuration.poolSize = 2
        let client = try RedisClient(configuration: configuration)
        _ = try await client.send(["SET", "where", "db3"])
        // Both pool connections authenticate and select.
        let replies = try await withThrowingTaskGroup(of: RedisValue.self) { group in
            for _ in 0..<8 { group.addTask { try await client.send(["GET", "where"]) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(replies.allSatisfy { $0 == .bulkString(Array("db3".utf8)) })

        var db0 = configuration
        db0.database = 0
        #expect(try await RedisClient(configuration: db0).send(["GET", "where"]) == .null)

        // An ACL user with its own password.
        _ = try await client.send(["ACL", "SETUSER", "ksm", "on", ">p@ss", "~*", "+@all"])
        let asUser = try RedisClient(configuration: RedisClientConfiguration(url: "redis://ksm:p%40ss@127.0.0.1:\(server.port)/3"))
        #expect(try await asUser.send(["GET", "where"]) == .bulkString(Array("db3".utf8)))

        var wrong = configuration
        wrong.password = "nope"
        do {
            _ = try await RedisClient(configuration: wrong).send(["PING"])
            Issue.record("wrong password accepted")
        } catch {
            #expect(error.code == .connectionFailed)
            #expect(!error.isRetriable)
            #expect(!error.description.contains("nope"))
        }
    }

    @Test func reconnectsAfterServerRestart() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let client = try RedisClient(configuration: server.configuration(poolSize: 1))
        #expect(try await client.send(["PING"]) == .simpleString("PONG"))

        server.stop()
        try await server.start()
        // The old socket is dead: the first call fails, retriable.
        do {
            _ = try await client.send(["PING"])
            Issue.record("first call after restart succeeded")
        } catch {
            #expect(error.isRetriable)
            #expect(error.code == .connectionLost)
        }
        // The next call reconnects.
        #expect(try await client.send(["PING"]) == .simpleString("PONG"))

        // While the server is down, calls fail retriable (connect refused, then backoff).
        server.stop()
        for _ in 0..<3 {
            await #expect(throws: RedisError.self) { _ = try await client.send(["PING"]) }
        }
        try await server.start()
        #expect(try await eventually { try await client.send(["PING"]) } == .simpleString("PONG"))
    }

    @Test func failedConnectsBackOffAndFailFast() async throws {
        let nothing = try RefusingLoopbackPort()
        defer { withExtendedLifetime(nothing) {} }
        var configuration = RedisClientConfiguration(host: "127.0.0.1", port: nothing.port, poolSize: 1)
        // A long window (at least 5 s after jitter), so a stalled CI host still calls inside it.
        configuration.reconnectBackoff = .init(base: .seconds(10), cap: .seconds(20))
        let client = try RedisClient(configuration: configuration)
        do {
            _ = try await client.send(["PING"])
            Issue.record("connected to nothing")
        } catch {
            #expect(error.code == .connectionFailed && error.isRetriable)
        }
        // Within the backoff window: fail fast with `reconnecting`, which no connect attempt gives.
        do {
            _ = try await client.send(["PING"])
            Issue.record("connected to nothing")
        } catch {
            #expect(error.code == .reconnecting && error.isRetriable)
        }
    }

    @Test func commandTimeoutThenRecovery() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        var configuration = server.configuration(poolSize: 1)
        configuration.commandTimeout = .milliseconds(300)
        let client = try RedisClient(configuration: configuration)
        #expect(try await client.send(["PING"]) == .simpleString("PONG"))
        let started = ContinuousClock.now
        do {
            // A list nobody ever pushes to, no timeout of its own: the server never answers, so only
            // the client's command timeout can end this call.
            _ = try await client.send(["BLPOP", "never-pushed", "0"])
            Issue.record("BLPOP on an empty list returned")
        } catch {
            #expect(error.code == .timeout)
            #expect(error.isRetriable)
        }
        // Ended by the 300 ms timeout, not the suite's time limit (generous bound for a loaded CI machine).
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(try await eventually { try await client.send(["PING"]) } == .simpleString("PONG"))
    }

    @Test func configurationFromURL() throws {
        let plain = try RedisClientConfiguration(url: "redis://cache.internal")
        #expect(plain.host == "cache.internal" && plain.port == 6379 && plain.database == 0 && plain.password == nil)
        let full = try RedisClientConfiguration(url: "redis://user:pa%3Ass@10.0.0.5:6380/7")
        #expect(full.username == "user" && full.password == "pa:ss" && full.host == "10.0.0.5" && full.port == 6380 && full.database == 7)
        #expect(!full.description.contains("pa:ss"))
        let v6 = try RedisClientConfiguration(url: "redis://:pw@[::1]:7000/2")
        #expect(v6.host == "::1" && v6.port == 7000 && v6.username == nil && v6.password == "pw" && v6.database == 2)
        for bad in ["http://x", "rediss://x", "redis://", "redis://h:0", "redis://h:99999", "redis://h/x", "redis://h:1/-1", "redis://%zz@h"] {
            #expect(throws: RedisError.self, "\(bad)") { try RedisClientConfiguration(url: bad) }
        }
        let backoff = RedisClientConfiguration.Backoff(base: .milliseconds(50), cap: .seconds(1))
        #expect(backoff.delay(afterFailures: 1, jitter: 1) == .milliseconds(50))
        #expect(backoff.delay(afterFailures: 3, jitter: 1) == .milliseconds(200))
        #expect(backoff.delay(afterFailures: 3, jitter: 0) == .milliseconds(100))
        #expect(backoff.delay(afterFailures: 40, jitter: 1) == .seconds(1))
    }
}

/// Retries `body` on retriable errors for up to 5 s.
func eventually<T>(_ body: () async throws -> T) async throws -> T {
    let deadline = ContinuousClock.now + .seconds(5)
    while true {
        do {
            return try await body()
        } catch let error as RedisError where error.isRetriable && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(25))
        }
    }
}
