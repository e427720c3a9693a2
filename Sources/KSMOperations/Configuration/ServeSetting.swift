import KSMService
import Licensing

/// One setting of `ksm serve`: its config-file key, its flag, its environment variable and the values
/// it accepts. ``ServeSetting/all`` is the one list the resolver, `--check-config` and the docs follow.
public struct ServeSetting: Sendable {
    /// What a value must look like.
    public enum Kind: Sendable {
        case string
        /// A whole number in the range.
        case integer(ClosedRange<Int>)
        /// A number (seconds, a ratio, a weight) within `bounds`.
        case number(NumberBounds)
        case boolean
        /// A list of whole numbers (JSON array; a comma-separated list in the environment).
        case integerList(ClosedRange<Int>)
        /// A list of strings (JSON array; a comma-separated list in the environment; a repeatable flag).
        case stringList
        /// A JSON object in the file; `KEY=VALUE` pairs on the command line and in the environment.
        case map(MapValues)
    }

    /// What the values of a map setting must be.
    public enum MapValues: Sendable {
        /// Strings only (file paths, header values).
        case strings
        /// librdkafka properties: strings, and numbers or booleans written as librdkafka's strings.
        case librdkafkaProperties
        /// Positive numbers.
        case positiveNumbers
    }

    /// A range of numbers, with a unit for messages.
    public struct NumberBounds: Sendable {
        public var lower: Double
        /// False: the lower bound itself is refused ("more than 0").
        public var lowerIncluded: Bool
        public var upper: Double
        public var unit: String

        public func contains(_ value: Double) -> Bool {
            value.isFinite && (lowerIncluded ? value >= lower : value > lower) && value <= upper
        }

        public var sentence: String {
            let low = lowerIncluded ? "from \(Self.format(lower))" : "more than \(Self.format(lower))"
            return "\(low) to \(Self.format(upper))\(unit.isEmpty ? "" : " \(unit)")"
        }

        static func format(_ value: Double) -> String {
            value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        }

        static func seconds(_ lower: Double, included: Bool = false, _ upper: Double) -> NumberBounds {
            NumberBounds(lower: lower, lowerIncluded: included, upper: upper, unit: "seconds")
        }
    }

    /// The config-file key and the key read through swift-configuration.
    public let key: String
    /// The long flag, without dashes; nil: only the file and the environment set it.
    public let flag: String?
    /// The environment variable.
    public let environment: String?
    public let kind: Kind
    /// Values never printed whole (`--check-config` redacts them).
    public let isSecret: Bool

    init(_ key: String, flag: String? = nil, env: String?, _ kind: Kind, secret: Bool = false) {
        self.key = key
        self.flag = flag
        self.environment = env
        self.kind = kind
        self.isSecret = secret
    }

    /// `--redis-url` style name of the flag.
    public var flagName: String? { (flag ?? (hasFlagNamedAfterKey ? key : nil)).map { "--\($0)" } }

    private var hasFlagNamedAfterKey: Bool { !Self.fileOnly.contains(key) }

    /// Keys the config file (and environment) accept that have no flag of the same name.
    static let fileOnly: Set<String> = ["otlp-headers", "service-name", "scheduling", "guards"]

    static let maximumSeconds = 86_400.0

    /// Every setting, in the order `--check-config` prints them.
    public static let all: [ServeSetting] = [
        ServeSetting("brokers", env: "KSM_KAFKA_BROKERS", .string),
        ServeSetting("group", env: "KSM_KAFKA_GROUP", .string),
        ServeSetting("requests-topic", env: "KSM_REQUESTS_TOPIC", .string),
        ServeSetting("class-topics", env: "KSM_CLASS_TOPICS", .boolean),
        ServeSetting("replies-topic", env: "KSM_REPLIES_TOPIC", .string),
        ServeSetting("dlq-topic", env: "KSM_DLQ_TOPIC", .string),
        ServeSetting("reply-topics", flag: "reply-topic", env: "KSM_REPLY_TOPICS", .stringList),
        ServeSetting("instance-id", env: "KSM_INSTANCE_ID", .string),
        ServeSetting("kafka-properties", flag: "kafka-property", env: "KSM_KAFKA_PROPERTIES", .map(.librdkafkaProperties)),
        // Secrets for librdkafka (SASL passwords, OAuth client secrets) as files: never in argv or the environment.
        ServeSetting("kafka-property-files", flag: "kafka-property-file", env: "KSM_KAFKA_PROPERTY_FILES", .map(.strings)),
        ServeSetting("redis-url", env: "KSM_REDIS_URL", .string, secret: true),
        ServeSetting("redis-wait-replicas", env: "KSM_REDIS_WAIT_REPLICAS", .integer(0...16)),
        ServeSetting("redis-wait-timeout-ms", env: "KSM_REDIS_WAIT_TIMEOUT_MS", .integer(1...10_000)),
        ServeSetting("credentials", env: "KSM_CREDENTIALS", .string),
        ServeSetting("fpscrypto-library", env: "KSM_FPSCRYPTO_LIBRARY", .string),
        ServeSetting("fpscrypto-generation", env: "KSM_FPSCRYPTO_GENERATION", .string),
        ServeSetting("kek", env: "KSM_KEK_FILES", .map(.strings)),
        ServeSetting("max-batch-size", env: "KSM_MAX_BATCH_SIZE", .integer(1...100_000)),
        ServeSetting("concurrent-batches", env: "KSM_CONCURRENT_BATCHES", .integer(1...1_024)),
        ServeSetting("max-in-flight", env: "KSM_MAX_IN_FLIGHT", .integer(1...10_000_000)),
        ServeSetting("crypto-threads", env: "KSM_CRYPTO_THREADS", .integer(1...1_024)),
        ServeSetting("protocol-versions", env: "KSM_PROTOCOL_VERSIONS", .integerList(0...Int(UInt32.max))),
        ServeSetting("max-request-bytes", env: "KSM_MAX_REQUEST_BYTES", .integer(1_024...LicenseJob.maximumEncodedSize)),
        ServeSetting("shutdown-timeout", env: "KSM_SHUTDOWN_TIMEOUT", .number(.seconds(1, included: true, 3_600))),
        ServeSetting("scheduling", env: "KSM_SCHEDULING", .boolean),
        ServeSetting("tenant-weights", flag: "tenant-weight", env: "KSM_TENANT_WEIGHTS", .map(.positiveNumbers)),
        ServeSetting("prefetch-max-wait", env: "KSM_PREFETCH_MAX_WAIT", .number(.seconds(0, 3_600))),
        ServeSetting("new-session-max-wait", env: "KSM_NEW_SESSION_MAX_WAIT", .number(.seconds(0, 3_600))),
        ServeSetting("new-session-share", env: "KSM_NEW_SESSION_SHARE", .number(NumberBounds(lower: 0, lowerIncluded: false, upper: 0.5, unit: "of a batch"))),
        ServeSetting("prefetch-share", env: "KSM_PREFETCH_SHARE", .number(NumberBounds(lower: 0, lowerIncluded: true, upper: 0.5, unit: "of a batch"))),
        ServeSetting("cache-ttl", env: "KSM_CACHE_TTL", .number(.seconds(0, included: true, maximumSeconds))),
        ServeSetting("rotation-lead", env: "KSM_ROTATION_LEAD", .number(.seconds(0, included: true, maximumSeconds))),
        ServeSetting("rotation-interval", env: "KSM_ROTATION_INTERVAL", .number(.seconds(0, maximumSeconds))),
        ServeSetting("prefetch-window", env: "KSM_PREFETCH_WINDOW", .number(.seconds(0, included: true, 3_600))),
        ServeSetting("prefetch-margin", env: "KSM_PREFETCH_MARGIN", .number(.seconds(0, included: true, 600))),
        ServeSetting("guards", env: "KSM_GUARDS", .boolean),
        ServeSetting("reply-ttl", env: "KSM_REPLY_TTL", .number(.seconds(0, 30 * maximumSeconds))),
        ServeSetting("rate-window-ms", env: "KSM_RATE_WINDOW_MS", .integer(1...86_400_000)),
        ServeSetting("admin-port", env: "KSM_ADMIN_PORT", .integer(1...65_535)),
        ServeSetting("tenant-label-limit", env: "KSM_TENANT_LABEL_LIMIT", .integer(0...10_000)),
        ServeSetting("slot-count-interval", env: "KSM_SLOT_COUNT_INTERVAL", .number(.seconds(0, maximumSeconds))),
        ServeSetting("log-level", env: "KSM_LOG_LEVEL", .string),
        ServeSetting("log-format", env: "KSM_LOG_FORMAT", .string),
        ServeSetting("tracing", env: "KSM_TRACING", .boolean),
        // The OpenTelemetry settings keep the SDK's environment variable names (OTLPTracingConfiguration
        // reads them, with their own rules: OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, headers as k=v lists,
        // and maps them onto swift-otel's configuration).
        ServeSetting("otlp-endpoint", env: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", .string),
        ServeSetting("otlp-headers", env: "OTEL_EXPORTER_OTLP_HEADERS", .map(.strings), secret: true),
        ServeSetting("otlp-schedule-delay-ms", env: "OTEL_BSP_SCHEDULE_DELAY", .integer(1...3_600_000)),
        ServeSetting("otlp-timeout-ms", env: "OTEL_EXPORTER_OTLP_TIMEOUT", .integer(1...3_600_000)),
        ServeSetting("trace-sample-ratio", env: "OTEL_TRACES_SAMPLER_ARG", .number(NumberBounds(lower: 0, lowerIncluded: true, upper: 1, unit: ""))),
        ServeSetting("service-name", env: "OTEL_SERVICE_NAME", .string),
    ]

    /// Settings by config-file key.
    public static let byKey: [String: ServeSetting] = Dictionary(uniqueKeysWithValues: all.map { ($0.key, $0) })

    /// The environment variable naming the config file itself (`--config`).
    public static let configFileEnvironment = "KSM_CONFIG"
}
