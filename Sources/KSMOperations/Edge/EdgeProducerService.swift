import Kafka
import Logging
import ServiceLifecycle
import Synchronization

/// The edge's job producer as a `Service`: it reaches a broker at start (the requests topics'
/// metadata, which is also what readiness waits for), then asks again every ``recheckInterval``, so
/// `/readyz` turns 503 while no broker answers (a load balancer then sends players to edges that
/// can produce) and 200 again once one does. It lives until graceful shutdown, then flushes what is
/// queued (bounded) and closes. Stopped last, after the HTTP server and the reply consumer, so
/// requests in flight can still produce.
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

    /// How often a ready producer asks the brokers again for the requests topics' metadata.
    package static let recheckInterval: Duration = .seconds(3)

    package func run() async throws {
        var failedChecks = 0
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let failures = await producer.warmUp(topics: topics, timeout: .seconds(2))
            let wasReady = reached.withLock { $0 == nil }
            if failures.isEmpty {
                reached.withLock { $0 = nil }
                if !wasReady { logger.info("edge producer reached the brokers", metadata: ["topics": "\(topics.joined(separator: ","))"]) }
                failedChecks = 0
            } else {
                let reason = failures.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
                reached.withLock { $0 = "kafka producer: \(reason)" }
                failedChecks += 1
                if failedChecks == 1 || failedChecks % 30 == 0 {
                    logger.warning("edge producer cannot reach the brokers; not ready", metadata: ["reason": "\(reason)"])
                }
            }
            // Until the first broker answers, ask often; once ready, a slower check is enough.
            let pause = reached.withLock { $0 == nil } ? Self.recheckInterval : .milliseconds(500)
            do {
                // Graceful shutdown ends the wait: a pause must not delay the flush below.
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: pause) }
            } catch {
                break
            }
        }
        await producer.close(timeout: .seconds(5))
    }
}
