import Kafka
import Logging
import ServiceLifecycle
import Synchronization

/// The edge's job producer as a `Service`: it reaches a broker at start (the requests topics'
/// metadata, which is also what readiness waits for), lives until graceful shutdown, then flushes
/// what is queued (bounded) and closes. Stopped last, after the HTTP server and the reply consumer,
/// so requests in flight can still produce.
package final class EdgeProducerService: Service, Sendable {
    package let producer: KafkaProducer
    private let topics: [String]
    private let logger: Logger
    private let reached = Mutex<String?>("not yet connected")

    /// - Parameter topics: the requests topics the edge produces to; warmed up at start.
    package init(producer: KafkaProducer, topics: [String], logger: Logger) {
        self.producer = producer
        self.topics = topics
        self.logger = logger
    }

    /// Nil once a broker answered for every requests topic; else why not, for `/readyz`.
    package var notReadyReason: String? { reached.withLock { $0 } }

    package func run() async throws {
        var attempt = 0
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let failures = await producer.warmUp(topics: topics, timeout: .seconds(2))
            if failures.isEmpty {
                reached.withLock { $0 = nil }
                logger.info("edge producer reached the brokers", metadata: ["topics": "\(topics.joined(separator: ","))"])
                break
            }
            let reason = failures.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
            reached.withLock { $0 = "kafka producer: \(reason)" }
            attempt += 1
            if attempt == 1 || attempt % 30 == 0 { logger.warning("edge producer cannot reach the brokers yet", metadata: ["reason": "\(reason)"]) }
            try? await Task.sleep(for: .milliseconds(500))
        }
        try? await gracefulShutdown()
        await producer.close(timeout: .seconds(5))
    }
}
