import KSMTestSupport
import Logging
import Synchronization
import Testing

@testable import Kafka

/// Settings that make librdkafka react in tens of milliseconds against the in-process mock cluster.
enum Fast {
    static let producer: [String: String] = [
        "linger.ms": "1",
        "reconnect.backoff.ms": "50",
        "reconnect.backoff.max.ms": "200",
        "retry.backoff.ms": "50",
        "message.timeout.ms": "30000",
    ]
    static let consumer: [String: String] = [
        // Long enough that a stalled host (heartbeats late by seconds) does not get a live member
        // evicted, which would rebalance and redeliver. The cost: the mock group coordinator waits
        // session.timeout.ms - 1 s for members to (re)join whenever the group changes, so every
        // wait for an assignment allows a minute (`eventually`'s default).
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "100",
        "fetch.wait.max.ms": "20",
        "fetch.error.backoff.ms": "50",
        "reconnect.backoff.ms": "50",
        "reconnect.backoff.max.ms": "200",
        "topic.metadata.refresh.interval.ms": "500",
    ]
}

let testLogger: Logger = {
    var logger = Logger(label: "kafka.test")
    logger.logLevel = Logger.Level(rawValue: ProcessInfoLite.environment("KAFKA_TEST_LOG") ?? "") ?? .info
    return logger
}()

func makeProducer(_ cluster: KafkaMockCluster, extra: [String: String] = [:]) throws -> KafkaProducer {
    var config = KafkaProducer.Configuration(bootstrapServers: cluster.bootstrapServers)
    config.properties = Fast.producer.merging(extra) { $1 }
    return try KafkaProducer(configuration: config, logger: testLogger)
}

func makeConsumer(
    _ cluster: KafkaMockCluster, group: String, topics: [String],
    configure: (inout KafkaConsumer.Configuration) -> Void = { _ in }
) throws -> KafkaConsumer {
    var config = KafkaConsumer.Configuration(bootstrapServers: cluster.bootstrapServers, groupID: group, topics: topics)
    config.properties = Fast.consumer
    if let debug = ProcessInfoLite.environment("KAFKA_TEST_RDDEBUG") { config.properties["debug"] = debug }
    configure(&config)
    return try KafkaConsumer(configuration: config, logger: testLogger)
}

func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
func text(_ b: [UInt8]?) -> String? { b.map { String(decoding: $0, as: UTF8.self) } }

struct TimedOut: Error, CustomStringConvertible {
    var description: String
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes. The condition is checked once
/// more after the deadline, so a sleep that overran it (a stalled host) cannot skip the last look.
/// The timeout only bounds how long a failing test waits: generous, for a loaded CI machine.
func eventually(
    _ what: String, timeout: Duration = .seconds(60), _ condition: () throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try condition() { return }
        guard ContinuousClock.now < deadline else { break }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw TimedOut(description: "timed out waiting for \(what)")
}

/// Drains a consumer's events on a task of its own and records them; an optional handler runs inside
/// the loop (as a worker's would), e.g. to store offsets when partitions are revoked.
final class EventLog: Sendable {
    struct Log {
        var messages: [KafkaMessage] = []
        var assigned: [[TopicPartition]] = []
        var revoked: [[TopicPartition]] = []
        var errors: [KafkaError] = []
        var ended = false
        /// Assignment replayed in event order (a partition may come, go and come back).
        var owned: Set<TopicPartition> = []
    }

    let log = Mutex(Log())
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(_ consumer: KafkaConsumer, handler: (@Sendable (KafkaConsumer.Event, KafkaConsumer) -> Void)? = nil) {
        let task = Task { [self] in
            for await event in consumer.events {
                handler?(event, consumer)
                self.log.withLock { l in
                    switch event {
                    case .message(let m): l.messages.append(m)
                    case .assigned(let tps):
                        l.assigned.append(tps)
                        l.owned.formUnion(tps)
                    case .revoked(let tps):
                        l.revoked.append(tps)
                        l.owned.subtract(tps)
                    case .error(let e): l.errors.append(e)
                    }
                }
            }
            self.log.withLock { $0.ended = true }
        }
        self.task.withLock { $0 = task }
    }

    var messages: [KafkaMessage] { log.withLock { $0.messages } }
    var assignedPartitions: Set<TopicPartition> {
        log.withLock { $0.owned }
    }

    /// Waits until the events task ended (after the consumer closed).
    func waitForEnd() async {
        await task.withLock { $0 }?.value
    }
}

/// Serialises suites that share the machine: each test creates its own cluster anyway.
func withCluster<T>(brokers: Int = 1, _ body: (KafkaMockCluster) async throws -> T) async throws -> T {
    let cluster = try KafkaMockCluster(brokers: brokers, logger: testLogger)
    return try await body(cluster)
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum ProcessInfoLite {
    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
