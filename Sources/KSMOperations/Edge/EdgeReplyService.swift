import KSMService
import Kafka
import Logging
import ServiceLifecycle
import Synchronization

/// This edge's reply topic, read as a `Service`: created at start when missing, then every
/// partition assigned at its log end (``KafkaAssignedConsumer``: no group, no commits, nothing old
/// read), each reply handed to the request waiting for its `correlation-id` (``EdgeReplyWaiters``).
/// A reply nobody waits for is counted and dropped. At shutdown (after the HTTP server drained) the
/// consumer closes and any request still waiting is given up.
package final class EdgeReplyService: Service, Sendable {
    private let configuration: EdgeConfiguration
    /// Asks for the reply topic's metadata where CreateTopics is not answered (auto-creation).
    private let producer: KafkaProducer
    private let waiters: EdgeReplyWaiters
    private let metrics: EdgeMetrics
    private let logger: Logger
    private let state = Mutex<String?>("reply topic not yet assigned")

    /// Partitions of a reply topic this edge creates: one is plenty for one instance's replies.
    package static let partitions = 1
    /// Retention of a reply topic this edge creates: an hour (no reply is read after its deadline).
    package static let retentionMilliseconds = 3_600_000
    /// How long CreateTopics may take before auto-creation is tried.
    package static let createTimeout: Duration = .seconds(3)

    package init(configuration: EdgeConfiguration, producer: KafkaProducer, waiters: EdgeReplyWaiters, metrics: EdgeMetrics, logger: Logger) {
        self.configuration = configuration
        self.producer = producer
        self.waiters = waiters
        self.metrics = metrics
        self.logger = logger
    }

    /// Nil once the reply topic is assigned; else why not, for `/readyz`.
    package var notReadyReason: String? { state.withLock { $0 } }

    package func run() async throws {
        let topic = configuration.replyTopic
        var settings = KafkaAssignedConsumer.Configuration(bootstrapServers: configuration.brokers, topic: topic, properties: configuration.kafkaProperties)
        settings.properties["fetch.wait.max.ms"] = settings.properties["fetch.wait.max.ms"] ?? "10"
        let consumer = try KafkaAssignedConsumer(
            configuration: settings, logger: logger,
            onError: { [logger] error in logger.debug("edge reply consumer: \(error)") },
            onMessage: { [waiters, metrics] message in Self.receive(message, waiters: waiters, metrics: metrics) })
        var attempt = 0
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            do {
                try await ensureTopic(topic)
                let ends = try await consumer.assignAtEnd(timeout: .seconds(5))
                state.withLock { $0 = nil }
                logger.info(
                    "edge reply topic assigned at its end", metadata: ["topic": "\(topic)", "offsets": "\(ends.values.sorted().map(String.init))"])
                break
            } catch {
                state.withLock { $0 = "reply topic \(topic): \(error)" }
                attempt += 1
                if attempt == 1 || attempt % 30 == 0 { logger.warning("edge reply topic not ready yet", metadata: ["topic": "\(topic)", "error": "\(error)"]) }
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        try? await gracefulShutdown()
        state.withLock { $0 = "stopping" }
        await consumer.close()
        waiters.cancelAll()
    }

    /// Creates the reply topic when the cluster does not have it: by CreateTopics, with the requests
    /// topic's replication factor (1 when that is unknown) and a retention of an hour; where the
    /// cluster answers no CreateTopics in time (librdkafka's mock cluster has no controller), by a
    /// producer's metadata request, which a cluster with `auto.create.topics.enable` answers by
    /// creating it with its defaults.
    private func ensureTopic(_ topic: String) async throws(KafkaError) {
        let existing = try await KafkaAdmin.topics(bootstrap: configuration.brokers, properties: configuration.kafkaProperties, timeout: .seconds(5))
        guard existing[topic] == nil else { return }
        let replication = max(1, existing[configuration.requestsTopic]?.replicationFactor ?? 1)
        let spec = KafkaAdmin.TopicSpecification(
            name: topic, partitions: Self.partitions, replicationFactor: replication, configs: ["retention.ms": "\(Self.retentionMilliseconds)"])
        do throws(KafkaError) {
            let outcome = try await KafkaAdmin.createTopics(
                [spec], bootstrap: configuration.brokers, properties: configuration.kafkaProperties, timeout: Self.createTimeout)
            // TOPIC_ALREADY_EXISTS (36): another edge of the same instance ID, or auto-creation, was first.
            if let failure = outcome[topic] ?? nil, failure.code != KafkaError.Code(rawValue: 36) { throw failure }
            logger.info("edge reply topic created", metadata: ["topic": "\(topic)", "replication": "\(replication)"])
        } catch {
            logger.info(
                "edge reply topic: CreateTopics failed, asking for its metadata so the cluster may auto-create it",
                metadata: ["topic": "\(topic)", "error": "\(error)"])
            if let failure = await producer.warmUp(topics: [topic], timeout: .seconds(5))[topic] { throw failure }
        }
    }

    /// One record from the reply topic, on the consumer's thread.
    static func receive(_ message: KafkaMessage, waiters: EdgeReplyWaiters, metrics: EdgeMetrics) {
        guard let header = message.header("correlation-id"), let id = String(validating: header, as: UTF8.self),
            let reply = try? LicenseReply(json: message.value)
        else {
            metrics.undecodableReply()
            return
        }
        switch waiters.deliver(id, reply: reply) {
        case .matched: break
        case .unmatched: metrics.unmatchedReply()
        case .duplicate: metrics.duplicateReply()
        }
    }
}
