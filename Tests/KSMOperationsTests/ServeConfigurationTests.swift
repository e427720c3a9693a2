import Foundation
import KSMOperations
import KSMService
import Licensing
import RedisStore
import Testing

/// `ksm serve`'s configuration: layering, and one named error per mistake.
@Suite struct ServeConfigurationTests {
    static let required: [String: String] = ["KSM_KAFKA_BROKERS": "k:9092", "KSM_REDIS_URL": "redis://r:6379/0", "KSM_CREDENTIALS": "/c.json"]

    func file(_ json: String) throws -> String {
        let path = NSTemporaryDirectory() + "ksm-config-\(UUID().uuidString).json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func problems(flags: [String: ConfigFlagValue] = [:], env: [String: String] = required, json: String? = nil) throws -> ServeConfigurationError {
        let path = try json.map(file)
        do {
            _ = try ServeConfiguration.resolve(flags: flags, environment: env, configFile: path)
        } catch {
            return error
        }
        Issue.record("configuration was accepted")
        return ServeConfigurationError(problems: [])
    }

    @Test("flags win over the environment, which wins over the file")
    func precedence() throws {
        let path = try file(#"{"group": "from-file", "requests-topic": "file-topic", "replies-topic": "file-replies", "admin-port": 7000}"#)
        var env = Self.required
        env["KSM_KAFKA_GROUP"] = "from-env"
        env["KSM_REQUESTS_TOPIC"] = "env-topic"
        env["KSM_ADMIN_PORT"] = "8000"
        let c = try ServeConfiguration.resolve(flags: ["group": .string("from-flag"), "admin-port": .integer(9000)], environment: env, configFile: path)
        #expect(c.worker.groupID == "from-flag")
        #expect(c.worker.requestsTopic == "env-topic")
        #expect(c.worker.repliesTopic == "file-replies")
        #expect(c.adminPort == 9000)
    }

    @Test("concurrent batches default to four per crypto thread; a set value wins at any layer")
    func concurrentBatchesFollowCryptoThreads() throws {
        let three = try ServeConfiguration.resolve(flags: ["crypto-threads": .integer(3)], environment: Self.required, configFile: nil)
        #expect(three.cryptoThreads == 3 && three.worker.concurrentBatches == 12)
        let one = try ServeConfiguration.resolve(flags: ["crypto-threads": .integer(1)], environment: Self.required, configFile: nil)
        #expect(one.worker.concurrentBatches == 4)
        var env = Self.required
        env["KSM_CONCURRENT_BATCHES"] = "5"
        let set = try ServeConfiguration.resolve(flags: ["crypto-threads": .integer(3)], environment: env, configFile: nil)
        #expect(set.worker.concurrentBatches == 5)
        #expect(WorkerConfiguration.concurrentBatches(forCryptoThreads: 512) == 1_024)
    }

    @Test("class topics and batch floors are read from every layer; impossible ones stop the worker by name")
    func classTopics() throws {
        var env = Self.required
        env["KSM_CLASS_TOPICS"] = "true"
        env["KSM_NEW_SESSION_SHARE"] = "0.25"
        let c = try ServeConfiguration.resolve(flags: ["prefetch-share": .number(0.05)], environment: env, configFile: nil)
        #expect(c.worker.classTopics)
        #expect(c.worker.scheduling.newSessionShare == 0.25 && c.worker.scheduling.prefetchShare == 0.05)
        #expect(try ServeConfiguration.resolve(flags: [:], environment: Self.required, configFile: nil).worker.classTopics == false)

        // Shares that leave continuity less than half a batch; a share of zero for new sessions (no floor).
        let shares = try problems(flags: ["new-session-share": .number(0.4), "prefetch-share": .number(0.2)])
        #expect(shares.description.contains("0.5") && shares.names("--new-session-share"), "\(shares)")
        #expect(try problems(flags: ["new-session-share": .number(0)]).names("--new-session-share"))
        // A requests topic whose class topics Kafka would refuse, and a reply topic the worker reads.
        let long = String(repeating: "t", count: 240)
        let name = try problems(flags: ["requests-topic": .string(long), "class-topics": .boolean(true)])
        #expect(name.description.contains("continuity"), "\(name)")
        #expect(
            try ServeConfiguration.resolve(flags: ["requests-topic": .string(long)], environment: Self.required, configFile: nil).worker.requestsTopic == long)
        let loop = try problems(flags: ["replies-topic": .string("fps.license.requests.new"), "class-topics": .boolean(true)])
        #expect(loop.names("--replies-topic"), "\(loop)")
    }

    @Test("an unknown config-file key is refused by name, with the likely key")
    func unknownKey() throws {
        let error = try problems(json: #"{"redsi-url": "redis://x"}"#)
        #expect(error.problems.first?.kind == .unknownKey)
        #expect(error.description.contains("redsi-url") && error.description.contains("redis-url"))
    }

    @Test("a number where a string is expected is refused by key")
    func wrongType() throws {
        let error = try problems(json: #"{"group": 5}"#)
        #expect(error.problems.map(\.kind) == [.wrongType])
        #expect(error.names("group"))
    }

    @Test("a kafka-properties map with numbers and booleans is kept whole, as librdkafka strings")
    func kafkaPropertiesKeptWhole() throws {
        let path = try file(#"{"kafka-properties": {"security.protocol": "SASL_SSL", "session.timeout.ms": 10000, "enable.idempotence": true}}"#)
        let c = try ServeConfiguration.resolve(flags: ["kafka-properties": .list(["client.id=flag"])], environment: Self.required, configFile: path)
        #expect(
            c.worker.kafkaProperties == ["security.protocol": "SASL_SSL", "session.timeout.ms": "10000", "enable.idempotence": "true", "client.id": "flag"])
    }

    @Test("a kafka-properties map holding an object is refused whole, naming the entry")
    func kafkaPropertiesRefused() throws {
        let error = try problems(json: #"{"kafka-properties": {"security.protocol": "SASL_SSL", "bad": {"x": 1}}}"#)
        #expect(error.problems.map(\.kind) == [.wrongType])
        #expect(error.names("\"bad\""))
    }

    @Test("--admin-port 99999 is out of range")
    func adminPortFlagOutOfRange() throws {
        let error = try problems(flags: ["admin-port": .integer(99_999)])
        #expect(error.problems.map(\.kind) == [.outOfRange])
        #expect(error.names("--admin-port"))
    }

    @Test("KSM_ADMIN_PORT=notanumber is refused, not ignored")
    func adminPortNotANumber() throws {
        var env = Self.required
        env["KSM_ADMIN_PORT"] = "notanumber"
        let error = try problems(env: env)
        #expect(error.problems.map(\.kind) == [.wrongType])
        #expect(error.names("KSM_ADMIN_PORT"))
    }

    @Test("--trace-sample-ratio outside 0...1 is out of range")
    func sampleRatio() throws {
        let error = try problems(flags: ["trace-sample-ratio": .number(5)])
        #expect(error.names("--trace-sample-ratio") && error.problems.map(\.kind) == [.outOfRange])
    }

    @Test("the prefetch window and margin are read and checked; a window without rotation prefetch stops the worker by name")
    func prefetchWindow() throws {
        var env = Self.required
        env["KSM_PREFETCH_MARGIN"] = "5"
        let c = try ServeConfiguration.resolve(flags: ["prefetch-window": .number(30)], environment: env, configFile: nil)
        #expect(c.prefetchWindow == .seconds(30) && c.prefetchMargin == .seconds(5))
        #expect(c.prefetchAdvice == PrefetchWindow(windowMilliseconds: 30_000, marginMilliseconds: 5_000))
        #expect(try ServeConfiguration.resolve(flags: [:], environment: Self.required, configFile: nil).prefetchAdvice == PrefetchWindow())
        let negative = try problems(flags: ["prefetch-window": .number(-1)])
        #expect(negative.names("--prefetch-window") && negative.problems.map(\.kind) == [.outOfRange])
        #expect(try problems(flags: ["prefetch-margin": .number(601)]).names("--prefetch-margin"))
        // Asked for, but nothing would read the schedules: refused; the default stays quiet.
        let uncached = try problems(flags: ["prefetch-window": .number(60), "cache-ttl": .number(0)])
        #expect(uncached.names("--prefetch-window") && uncached.description.contains("rotation prefetch"), "\(uncached)")
        #expect(try problems(flags: ["prefetch-window": .number(60), "rotation-lead": .number(0)]).names("--prefetch-window"))
        #expect(try ServeConfiguration.resolve(flags: ["cache-ttl": .number(0)], environment: Self.required, configFile: nil).cacheTTL == .zero)
        #expect(
            try ServeConfiguration.resolve(flags: ["prefetch-window": .number(0), "cache-ttl": .number(0)], environment: Self.required, configFile: nil)
                .prefetchAdvice.isEnabled == false)
    }

    @Test("a negative --cache-ttl is out of range")
    func negativeCacheTTL() throws {
        let error = try problems(flags: ["cache-ttl": .number(-1)])
        #expect(error.names("--cache-ttl") && error.problems.map(\.kind) == [.outOfRange])
    }

    @Test("KSM_CACHE_TTL=inf is out of range")
    func infiniteCacheTTL() throws {
        var env = Self.required
        env["KSM_CACHE_TTL"] = "inf"
        let error = try problems(env: env)
        #expect(error.names("KSM_CACHE_TTL") && error.problems.map(\.kind) == [.outOfRange])
    }

    @Test("a negative integer in the config file is out of range, not a trap")
    func negativeIntegerInFile() throws {
        let error = try problems(json: #"{"protocol-versions": [-1], "max-batch-size": -3}"#)
        #expect(error.names("max-batch-size") && error.names("protocol-versions"))
        #expect(error.problems.allSatisfy { $0.kind == .outOfRange })
    }

    @Test("durations and counts below their minimum are refused")
    func durationsAndCounts() throws {
        var env = Self.required
        env["KSM_SHUTDOWN_TIMEOUT"] = "0"
        let error = try problems(flags: ["concurrent-batches": .integer(0), "reply-ttl": .number(0)], env: env)
        #expect(error.names("KSM_SHUTDOWN_TIMEOUT") && error.names("--concurrent-batches") && error.names("--reply-ttl"))
    }

    @Test("WAIT durability: off by default, on with a replica count, and a bad count or timeout refused at start-up")
    func redisWait() throws {
        #expect(try ServeConfiguration.resolve(flags: [:], environment: Self.required).redisDurability == nil)
        var env = Self.required
        env["KSM_REDIS_WAIT_REPLICAS"] = "1"
        let on = try ServeConfiguration.resolve(flags: ["redis-wait-timeout-ms": .integer(250)], environment: env)
        #expect(on.redisDurability == RedisDurability(replicas: 1, timeout: .milliseconds(250)))
        env["KSM_REDIS_WAIT_REPLICAS"] = "-1"
        let error = try problems(flags: ["redis-wait-timeout-ms": .integer(0)], env: env)
        #expect(error.names("KSM_REDIS_WAIT_REPLICAS") && error.names("--redis-wait-timeout-ms"))
    }

    @Test("every problem is reported, not only the first")
    func everyProblem() throws {
        let error = try problems(flags: ["admin-port": .integer(0)], env: [:], json: #"{"redsi-url": "x", "cache-ttl": "2"}"#)
        #expect(error.problems.count >= 5)
    }

    @Test("every setting has an environment variable of its own")
    func everySettingHasAVariable() {
        #expect(Set(ServeSetting.all.map(\.environment)).count == ServeSetting.all.count)
        #expect(ServeSetting.all.allSatisfy { !$0.environment.isEmpty })
    }

    @Test("--check-config's summary redacts the Redis password and librdkafka secrets")
    func summaryRedacts() throws {
        var env = Self.required
        env["KSM_REDIS_URL"] = "redis://user:hunter2@r:6379/0"
        env["KSM_KAFKA_PROPERTIES"] = "sasl.password=hunter3;security.protocol=SASL_SSL"
        let c = try ServeConfiguration.resolve(flags: [:], environment: env)
        #expect(!c.summary.contains("hunter2") && !c.summary.contains("hunter3"))
        #expect(c.summary.contains("SASL_SSL") && c.summary.contains("redis://<redacted>@r:6379/0"))
    }
}
