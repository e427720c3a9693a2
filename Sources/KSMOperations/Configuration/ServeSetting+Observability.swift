import KSMService
import Logging

/// The worker's and the span exporter's own defaults, so a `ksm serve` default and an embedder's cannot drift apart.
private let workerDefaults = WorkerConfiguration(brokers: "")
private let otlpDefaults = OTLPTracingConfiguration(endpoint: "", serviceInstanceID: "")

extension ServeSetting {
    package static let adminPort = ServeSetting(
        "admin-port", env: "KSM_ADMIN_PORT", .integer(1...65_535, default: nil), default: "off",
        help: "Admin port for /healthz, /readyz and /metrics.")
    package static let tenantLabelLimit = ServeSetting(
        "tenant-label-limit", env: "KSM_TENANT_LABEL_LIMIT", .integer(0...10_000, default: workerDefaults.tenantLabelLimit),
        help: "Tenants that get their own tenant label in /metrics; the rest count as \"other\".")
    package static let slotCountInterval = ServeSetting(
        "slot-count-interval", env: "KSM_SLOT_COUNT_INTERVAL", .duration(.seconds(0, maximumSeconds), default: .seconds(15)),
        help: "Seconds between counts of the lease slots in use, for /metrics (with an admin port).")
    package static let logLevel = ServeSetting(
        "log-level", env: "KSM_LOG_LEVEL", .choice(Logger.Level.allCases.map(\.rawValue), default: Logger.Level.info.rawValue),
        help: "The least severe level logged.")
    package static let logFormat = ServeSetting(
        "log-format", env: "KSM_LOG_FORMAT", .choice(LogFormat.allCases.map(\.rawValue), default: LogFormat.text.rawValue),
        help: "text (swift-log's default lines) or json (one JSON object per line).")
    package static let tracing = ServeSetting(
        "tracing", env: "KSM_TRACING", .boolean(default: workerDefaults.tracing),
        help: "Open a span per job through the bootstrapped tracer; traceparent headers pass to replies either way (docs/operations.md, Tracing).")
    // The OpenTelemetry settings keep the SDK's environment variable names (OTLPTracingConfiguration
    // reads them, with their own rules: OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, headers as k=v lists,
    // and maps them onto swift-otel's configuration).
    package static let otlpEndpoint = ServeSetting(
        "otlp-endpoint", env: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", .string(default: nil), default: "off",
        example: "http://127.0.0.1:4318/v1/traces",
        help:
            "With --tracing: export spans through swift-otel over OTLP/HTTP (protobuf, or http/json with OTEL_EXPORTER_OTLP_PROTOCOL) to this http:// or https:// URL, used as it is (or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces)."
    )
    package static let otlpHeaders = ServeSetting(
        "otlp-headers", flag: ServeSetting.Flag.none, env: "OTEL_EXPORTER_OTLP_HEADERS", .map(.strings), secret: true,
        help: "Headers sent with every export (k=v,k=v in the environment), e.g. an authorization token.")
    package static let otlpScheduleDelay = ServeSetting(
        "otlp-schedule-delay-ms", env: "OTEL_BSP_SCHEDULE_DELAY", .duration(.milliseconds(1...3_600_000), default: otlpDefaults.scheduleDelay),
        help: "Milliseconds a finished span may wait before its batch is exported.")
    package static let otlpTimeout = ServeSetting(
        "otlp-timeout-ms", env: "OTEL_EXPORTER_OTLP_TIMEOUT", .duration(.milliseconds(1...3_600_000), default: otlpDefaults.exportTimeout),
        help: "Milliseconds one batch export may take, retries included, and the final flush at shutdown.")
    package static let traceSampleRatio = ServeSetting(
        "trace-sample-ratio", env: "OTEL_TRACES_SAMPLER_ARG",
        .number(NumberBounds(lower: 0, lowerIncluded: true, upper: 1, unit: ""), default: otlpDefaults.rootSampleRatio),
        help: "Fraction of root traces (jobs without a valid traceparent; a traceparent's sampled flag decides for the others) recorded, 0 to 1.")
    package static let serviceName = ServeSetting(
        "service-name", flag: ServeSetting.Flag.none, env: "OTEL_SERVICE_NAME", .string(default: otlpDefaults.serviceName),
        help: "The service.name of exported spans.")
}
