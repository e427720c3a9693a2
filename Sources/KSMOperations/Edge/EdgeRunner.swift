import KSMService
import Kafka
import Logging
import Prometheus
import ServiceLifecycle

/// `ksm edge` put together from a resolved ``EdgeConfiguration``: the job producer, this instance's
/// reply consumer and the HTTP server, as one `ServiceGroup` that runs until SIGTERM or SIGINT.
/// Stateless: a request lives only in this process while it waits, so any number of instances run
/// side by side, each with its own reply topic. Logging is bootstrapped by the caller; `registry` is
/// what `/metrics` renders.
package enum EdgeRunner {
    /// How long requests in flight may take to finish after SIGTERM before they are cancelled;
    /// below Kubernetes' default 30 s grace period, and over the longest default deadline.
    package static let shutdownTimeout: Duration = .seconds(20)

    /// Runs the service until it is told to stop; returns once every service has stopped.
    /// - Parameters:
    ///   - admission: nil: ``EdgeAdmissionAssembly``'s, from the settings.
    ///   - certificates: nil: ``EdgeAdmissionAssembly``'s (Redis with `--redis-url`, else none).
    package static func run(
        _ settings: EdgeConfiguration, admission: (any EdgeAdmission)? = nil, certificates: EdgeCertificateRoute? = nil, tls: ServerTLS? = nil,
        registry: PrometheusCollectorRegistry, logger: Logger
    ) async throws {
        let services = try makeServices(settings, admission: admission, certificates: certificates, tls: tls, registry: registry, logger: logger)
        var configuration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger)
        configuration.maximumGracefulShutdownDuration = max(shutdownTimeout, settings.deadline + .seconds(5))
        try await ServiceGroup(configuration: configuration).run()
    }

    /// The librdkafka properties of the job producer: the configured ones over the edge's defaults
    /// (`linger.ms=1`: a request waits for its job; `message.timeout.ms` the deadline less a margin,
    /// ``deliveryMargin`` or half the deadline if that is less: a job not delivered by then fails its
    /// request with 503, "could not be queued", before the deadline's 504, since librdkafka looks
    /// for timed-out records about once a second and the record leaves after the request arrived).
    package static func producerProperties(_ settings: EdgeConfiguration) -> [String: String] {
        let deadline = settings.deadline.wholeMilliseconds
        let timeout = max(1, deadline - min(deliveryMargin.wholeMilliseconds, deadline / 2))
        let defaults = ["linger.ms": "1", "message.timeout.ms": "\(timeout)"]
        return defaults.merging(settings.kafkaProperties) { _, configured in configured }
    }

    /// How much earlier than a deadline of 3 s or more an undelivered job times out in the producer.
    package static let deliveryMargin: Duration = .milliseconds(1_500)

    /// Every service, in start order (`admission` nil: ``EdgeAdmissionAssembly``'s, from the
    /// settings); the group stops them in reverse: the server first (requests in flight finish),
    /// then the reply consumer, then the deadline sweep, then the producer (flushed).
    static func makeServices(
        _ settings: EdgeConfiguration, admission: (any EdgeAdmission)?, certificates: EdgeCertificateRoute? = nil, tls: ServerTLS?,
        registry: PrometheusCollectorRegistry, logger: Logger
    ) throws -> [any Service] {
        var parts = try EdgeAdmissionAssembly.make(settings, registry: registry, logger: logger)
        if let admission { parts.admission = admission }
        if let certificates { parts.certificates = certificates }
        let producer: KafkaProducer
        do {
            producer = try KafkaProducer(
                configuration: .init(bootstrapServers: settings.brokers, properties: producerProperties(settings)), logger: logger)
        } catch {
            throw ServeRunner.StartError("Cannot create the Kafka producer: \(error) Check --brokers and --kafka-property.")
        }
        let metrics = EdgeMetrics(registry: registry)
        let waiters = EdgeReplyWaiters(capacity: settings.maximumInFlight, onCount: { metrics.setInFlight($0) })
        let correlationIDs = EdgeCorrelationIDs()
        let topics = settings.classTopics ? [LicenseJob.Priority.continuity, .new, .prefetch].map { settings.requestTopic(for: $0) } : [settings.requestsTopic]
        let producing = EdgeProducerService(producer: producer, topics: topics, logger: logger)
        let replies = EdgeReplyService(configuration: settings, producer: producer, waiters: waiters, metrics: metrics, logger: logger)
        let notReadyReason: @Sendable () -> String? = {
            let reasons = [producing.notReadyReason, replies.notReadyReason].compactMap { $0 }
            return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
        }
        let route = EdgeLicenseRoute(
            configuration: settings, admission: parts.admission, waiters: waiters, correlationIDs: correlationIDs,
            produce: { record, onFailure in
                producer.produce(record) { outcome in
                    if case .failure(let error) = outcome { onFailure(error) }
                }
            }, logger: logger, notReadyReason: notReadyReason)
        let server = EdgeServer(
            host: settings.host, port: settings.port, route: route, metrics: metrics,
            readiness: {
                notReadyReason().map { .init(ok: false, detail: $0) }
                    ?? .init(ok: true, detail: "ok: producer connected, reply topic \(settings.replyTopic) assigned")
            },
            renderMetrics: { registry.emitToString() }, logger: logger, tls: tls, certificates: parts.certificates)
        logger.info("edge instance", metadata: ["reply_topic": "\(settings.replyTopic)", "correlation_nonce": "\(correlationIDs.nonce)"])
        return [producing, waiters, replies, server]
    }
}
