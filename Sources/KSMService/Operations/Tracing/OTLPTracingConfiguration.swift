import Tracing

/// Everything `ksm serve` needs to export spans over OTLP/HTTP: where, with which headers, how
/// often, what is sampled and how the resource is named. Plain values with documented defaults;
/// ``resolve(flags:environment:file:serviceInstanceID:)`` builds one from flags, the OpenTelemetry
/// environment variables and the config file.
public struct OTLPTracingConfiguration: Sendable {
    /// The exporter's own version: `telemetry.sdk.version`, the instrumentation scope's version and
    /// the `User-Agent`. Bump it when span names or attributes change meaning.
    public static let version = "0.1.0"
    /// The instrumentation scope of every span (`scope.name`) and `telemetry.sdk.name`.
    public static let scopeName = "fairplay-ksm"

    public var endpoint: OTLPEndpoint
    /// Sent with every export (`OTEL_EXPORTER_OTLP_HEADERS`), e.g. an API key for a vendor's
    /// collector. Names are validated; values are never logged.
    public var headers: [(name: String, value: String)] = []
    /// `service.name`. Default: `ksm` (`OTEL_SERVICE_NAME`).
    public var serviceName = "ksm"
    /// `service.instance.id`: the static-membership instance ID (the pod name) when there is one,
    /// else host name and process ID.
    public var serviceInstanceID: String
    /// More resource attributes (`OTEL_RESOURCE_ATTRIBUTES`); the ones above win over these.
    public var resourceAttributes: [String: String] = [:]
    /// Parent-based, with this ratio for root spans. Default: every root span.
    public var sampler: TraceSampler = .parentBasedAlwaysOn
    /// Queue, batch size, schedule and export timeout.
    public var batch = BatchSpanProcessorConfiguration()
    public var retry = OTLPRetryPolicy()
    public var limits = SpanLimits()

    public init(endpoint: OTLPEndpoint, serviceInstanceID: String) {
        self.endpoint = endpoint
        self.serviceInstanceID = serviceInstanceID
    }

    /// The resource every span is exported under.
    public var resource: SpanAttributes {
        var attributes = SpanAttributes()
        for (key, value) in resourceAttributes { attributes[key] = value }
        attributes["service.name"] = serviceName
        attributes["service.instance.id"] = serviceInstanceID
        attributes["telemetry.sdk.name"] = Self.scopeName
        attributes["telemetry.sdk.language"] = "swift"
        attributes["telemetry.sdk.version"] = Self.version
        return attributes
    }

    /// For the start-up log line: endpoint, sampling, batching, and header names only.
    public var summary: String {
        "OTLP/HTTP JSON to \(endpoint), service \(serviceName), root sampling ratio \(sampler.rootRatio), "
            + "batches of up to \(batch.effectiveBatchSize) every \(batch.scheduleDelay), queue \(batch.maximumQueueSize), "
            + "timeout \(batch.exportTimeout), headers \(headers.map(\.name))"
    }
}
