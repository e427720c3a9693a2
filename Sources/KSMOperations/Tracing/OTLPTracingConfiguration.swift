import KSMService
import Logging
import OTel
import ServiceLifecycle
import Tracing

/// Everything `ksm serve` needs to export spans through swift-otel: where, with which headers, how
/// often, what is sampled and how the resource is named. Plain values with documented defaults;
/// ``resolve(flags:environment:file:serviceInstanceID:)`` builds one from flags, the OpenTelemetry
/// environment variables and the config file, and ``otelConfiguration(logger:)`` hands it to swift-otel.
package struct OTLPTracingConfiguration: Sendable {
    /// How spans travel to the collector. swift-otel is built with its OTLP/HTTP exporter only (the
    /// gRPC one would build grpc-swift for a transport the deployments do not use).
    package enum WireProtocol: String, Sendable {
        /// `http/protobuf`, swift-otel's and OpenTelemetry's default.
        case httpProtobuf = "http/protobuf"
        /// `http/json`: OTLP JSON, for collectors (and tests) that read JSON.
        case httpJSON = "http/json"
    }

    /// The traces URL, used as it is (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` semantics): http or https.
    package var endpoint: String
    /// Default: `http/protobuf` (`OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`).
    package var wireProtocol = WireProtocol.httpProtobuf
    /// Sent with every export (`OTEL_EXPORTER_OTLP_HEADERS`), e.g. an API key for a vendor's
    /// collector. Names are validated; values are never logged.
    package var headers: [(name: String, value: String)] = []
    /// `service.name`. Default: `ksm` (`OTEL_SERVICE_NAME`).
    package var serviceName = "ksm"
    /// `service.instance.id`: the static-membership instance ID (the pod name) when there is one,
    /// else host name and process ID.
    package var serviceInstanceID: String
    /// More resource attributes (`OTEL_RESOURCE_ATTRIBUTES`); the ones above win over these.
    package var resourceAttributes: [String: String] = [:]
    /// Parent-based sampling with this ratio for root spans. Default: 1, every root span.
    package var rootSampleRatio = 1.0
    /// Spans held for export; when full, further spans are dropped (swift-otel logs a warning).
    /// Default: 2048 (`OTEL_BSP_MAX_QUEUE_SIZE`).
    package var maximumQueueSize = 2048
    /// Largest batch per export request. Default: 512 (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`).
    package var maximumExportBatchSize = 512
    /// Longest a span waits before its batch is exported. Default: 5 s (`OTEL_BSP_SCHEDULE_DELAY`).
    package var scheduleDelay: Duration = .seconds(5)
    /// Longest one batch export (one HTTP request with its retries) may take; also the budget of the
    /// final flush at shutdown. Default: 10 s (`OTEL_EXPORTER_OTLP_TIMEOUT`).
    package var exportTimeout: Duration = .seconds(10)

    package init(endpoint: String, serviceInstanceID: String) {
        self.endpoint = endpoint
        self.serviceInstanceID = serviceInstanceID
    }

    /// For the start-up log line: endpoint (its query replaced by `?...`, as vendors put API keys
    /// there), sampling, batching, and header names only.
    package var summary: String {
        let shownEndpoint = endpoint.firstIndex(of: "?").map { endpoint[..<$0] + "?..." } ?? endpoint
        return "OTLP \(wireProtocol.rawValue) to \(shownEndpoint), service \(serviceName), root sampling ratio \(rootSampleRatio), "
            + "batches of up to \(maximumExportBatchSize) every \(scheduleDelay), queue \(maximumQueueSize), "
            + "timeout \(exportTimeout), headers \(headers.map(\.name))"
    }

    /// swift-otel's configuration for these settings: traces only (metrics go to Prometheus, logs to
    /// swift-log), W3C trace context as the one propagator, and swift-otel's own diagnostics (export
    /// failures, dropped spans) logged through `logger`.
    package func otelConfiguration(logger: Logger) -> OTel.Configuration {
        var configuration = OTel.Configuration.default
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        configuration.traces.enabled = true
        configuration.diagnosticLogger = .custom(logger)
        configuration.propagators = [.traceContext]
        configuration.serviceName = serviceName
        var attributes = resourceAttributes
        attributes["service.name"] = serviceName
        attributes["service.instance.id"] = serviceInstanceID
        // swift-otel 1.6 leaves the SDK's resource attributes out; collectors and vendors group by them.
        attributes["telemetry.sdk.name"] = "swift-otel"
        attributes["telemetry.sdk.language"] = "swift"
        configuration.resourceAttributes = attributes
        // `parentBasedTraceIDRatio(ratio:)` is nil only outside 0...1, which resolve() refuses.
        configuration.traces.sampler = .parentBasedTraceIDRatio(ratio: rootSampleRatio) ?? .parentBasedAlwaysOn
        configuration.traces.exporter = .otlp
        configuration.traces.batchSpanProcessor.maxQueueSize = maximumQueueSize
        configuration.traces.batchSpanProcessor.maxExportBatchSize = min(maximumExportBatchSize, maximumQueueSize)
        configuration.traces.batchSpanProcessor.scheduleDelay = scheduleDelay
        configuration.traces.batchSpanProcessor.exportTimeout = exportTimeout
        configuration.traces.otlpExporter.endpoint = endpoint
        configuration.traces.otlpExporter.protocol = wireProtocol == .httpJSON ? .httpJSON : .httpProtobuf
        configuration.traces.otlpExporter.headers = headers.map { ($0.name, $0.value) }
        configuration.traces.otlpExporter.timeout = exportTimeout
        return configuration
    }

    /// Bootstraps `InstrumentationSystem` with swift-otel's tracer and returns the Service that runs
    /// its batch span processor and exporter: run it in the ServiceGroup, first, so it shuts down
    /// last and flushes what the worker ended while draining. Call once per process.
    package func bootstrap(logger: Logger, environment: [String: String]) throws -> any Service {
        try OTel.bootstrap(configuration: otelConfiguration(logger: logger), environment: Self.environmentForOTel(environment))
    }

    /// The environment swift-otel may still read: only the exporter's TLS and compression variables
    /// (`OTEL_EXPORTER_OTLP_[TRACES_]CERTIFICATE`, `CLIENT_KEY`, `CLIENT_CERTIFICATE`, `COMPRESSION`,
    /// `INSECURE`). Every other OpenTelemetry variable was resolved by ``resolve(flags:environment:file:serviceInstanceID:)``
    /// in ksm's order (flags > environment > file); passing it on would let swift-otel's environment
    /// overrides beat a flag.
    package static func environmentForOTel(_ environment: [String: String]) -> [String: String] {
        let passed = ["CERTIFICATE", "CLIENT_KEY", "CLIENT_CERTIFICATE", "COMPRESSION", "INSECURE"]
        let prefixes = ["OTEL_EXPORTER_OTLP_", "OTEL_EXPORTER_OTLP_TRACES_"]
        return environment.filter { key, _ in prefixes.contains { prefix in passed.contains { key == prefix + $0 } } }
    }
}
