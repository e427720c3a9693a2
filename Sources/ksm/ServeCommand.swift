import ArgumentParser
import Foundation
import KSMOperations
import KSMService
import Logging
import Metrics
import Prometheus

/// `ksm serve`: one KSM worker of the fleet. Configuration from a JSON file, then environment
/// variables, then flags (each overrides the one before).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run a KSM worker: consume license jobs from Kafka, answer them with Redis and publish CKCs."
    )

    @OptionGroup var options: ServeOptions

    @Flag(
        help:
            "Resolve the configuration (flags, environment, config file; key files and credentials are read) without connecting to Kafka or Redis, print it with secrets redacted and exit: 0 if it is usable, 64 naming every problem otherwise."
    )
    var checkConfig = false

    func run() async throws {
        do {
            try await runChecked()
        } catch let failure as CommandFailure {
            throw failure.report(command: "serve")
        }
    }

    private func runChecked() async throws {
        let settings: ServeConfiguration
        do {
            settings = try options.resolve(environment: ProcessInfo.processInfo.environment)
        } catch {
            throw CommandFailure.configuration(error.problems.map(\.message))
        }
        if checkConfig {
            try Self.check(settings)
            return
        }
        do {
            try await serve(settings)
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure.runtime(CommandFailure.sentence(for: error))
        }
    }

    /// `--check-config`: what `ksm serve` would run with, and the files it would read.
    static func check(_ settings: ServeConfiguration) throws {
        var problems: [String] = []
        do { _ = try settings.keyring() } catch { problems.append(CommandFailure.sentence(for: error)) }
        do {
            _ = try ServeRunner.keyServer(for: settings)
        } catch {
            problems.append(CommandFailure.sentence(for: error))
        }
        guard problems.isEmpty else { throw CommandFailure.configuration(problems) }
        print(settings.summary)
        print("configuration OK: nothing was connected to; ksm serve would start with these settings")
    }

    private func serve(_ settings: ServeConfiguration) async throws {
        switch settings.logFormat {
        case .json: LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
        case .text: LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        }
        // swift-metrics -> Prometheus text on /metrics; an embedder bootstraps its own backend instead.
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(DescribedPrometheusFactory(registry: registry))
        var logger = Logger(label: "ksm.worker")
        logger.logLevel = settings.logLevel
        logger.info("worker process starting", metadata: ["allocator": "\(Allocator.description)", "version": "\(KSMVersion.current)"])

        try await ServeRunner.run(settings, registry: registry, logger: logger)
    }
}

/// Flags of `ksm serve`, and how they combine with the config file and the environment.
struct ServeOptions: ParsableArguments {
    @Option(
        help:
            "JSON config file with the same keys as the long flags (e.g. \"brokers\", \"redis-url\", \"kek\": {\"id\": \"path\"}); unknown keys are refused (env KSM_CONFIG)."
    )
    var config: String?
    @Option(help: .setting("brokers", "Kafka bootstrap servers."))
    var brokers: String?
    @Option(help: .setting("group", "Consumer group. Default: fps-ksm."))
    var group: String?
    @Option(help: .setting("requests-topic", "Requests topic. Default: fps.license.requests."))
    var requestsTopic: String?
    @Flag(
        help: .setting(
            "class-topics",
            "Also read one requests topic per priority class, <requests-topic>.continuity, .new and .prefetch: continuity is fetched and answered first, new sessions next, prefetch with spare capacity (docs/scheduling.md). Default: off."
        ))
    var classTopics = false
    @Option(help: .setting("replies-topic", "Replies topic. Default: fps.license.replies."))
    var repliesTopic: String?
    @Option(
        name: .customLong("reply-topic"),
        help: .setting(
            "reply-topics",
            "A topic a job's reply-topic header may name: a topic, a prefix ending in *, or TENANT:PATTERN for one tenant (who is then limited to its own entries); repeatable. The replies topic is always allowed. Default: the replies topic and <replies topic>.*."
        ))
    var replyTopics: [String] = []
    @Option(help: .setting("dlq-topic", "Dead-letter topic. Default: fps.license.dlq."))
    var dlqTopic: String?
    @Option(help: .setting("redis-url", "redis://[user:pass@]host:port/db, or redis-cluster://[user:pass@]host:port,host:port for a Redis Cluster."))
    var redisURL: String?
    @Option(
        help: .setting(
            "redis-wait-replicas",
            "Replicas that must acknowledge each lease batch (Redis WAIT) before it is answered; 0: asynchronous replication. Default: 0."))
    var redisWaitReplicas: Int?
    @Option(help: .setting("redis-wait-timeout-ms", "How long a lease batch waits for those replicas; fewer by then answer storeUnavailable. Default: 100."))
    var redisWaitTimeoutMs: Int?
    @Option(help: .setting("credentials", "Apple's certificates.json shape."))
    var credentials: String?
    @Option(help: .setting("fpscrypto-library", "Apple's libfpscrypto, for provisioning-data credentials."))
    var fpscryptoLibrary: String?
    @Option(
        help: .setting(
            "fpscrypto-generation", "Which SDK's libfpscrypto that is: sdk26 (struct version 2, opens SPC v3) or sdk5 (struct version 1). Default: sdk26."))
    var fpscryptoGeneration: String?
    @Option(name: .customLong("kek"), help: .setting("kek", "Key-encryption key ID=PATH (hex or raw 16/32 bytes); repeatable."))
    var keks: [String] = []
    @Option(
        name: .customLong("kafka-property"),
        help: .setting(
            "kafka-properties",
            "librdkafka KEY=VALUE passed through; repeatable. Never a secret: every user of the host can read a process's arguments; use --kafka-property-file."
        ))
    var kafkaProperties: [String] = []
    @Option(
        name: .customLong("kafka-property-file"),
        help: .setting(
            "kafka-property-files",
            "librdkafka NAME=PATH: the property's value is the file's content (less one trailing line break), read as a secret file (mode 600, or 0440 with the pod's group); for SASL passwords and other secrets, which never belong in arguments or the environment; repeatable."
        ))
    var kafkaPropertyFiles: [String] = []
    @Option(help: .setting("instance-id", "Static membership group.instance.id, e.g. the pod name."))
    var instanceId: String?
    @Option(help: .setting("max-batch-size", "Largest batch (one Redis round trip each). Default: 128."))
    var maxBatchSize: Int?
    @Option(help: .setting("concurrent-batches", "Batches processed at once. Default: four per crypto thread (at least 4)."))
    var concurrentBatches: Int?
    @Option(help: .setting("max-in-flight", "Jobs in flight before the consumer pauses. Default: 16384."))
    var maxInFlight: Int?
    @Option(
        help: .setting(
            "crypto-threads",
            "Threads for RSA and AES work. Default: the cores this process may use (its cgroup quota and cpuset, capped by its affinity mask, as taskset sets it)."
        ))
    var cryptoThreads: Int?
    @Option(
        parsing: .upToNextOption,
        help: .setting("protocol-versions", "FPS protocol versions accepted as the version a device used. Default: any, as Apple's SDK 26."))
    var protocolVersions: [UInt32] = []
    @Option(help: .setting("log-level", "trace, debug, info, notice, warning, error. Default: info."))
    var logLevel: String?
    @Option(help: .setting("log-format", "text (swift-log's default lines) or json (one JSON object per line). Default: text."))
    var logFormat: String?
    @Flag(
        help: .setting(
            "tracing", "Open a span per job through the bootstrapped tracer; traceparent headers pass to replies either way (docs/operations.md, Tracing)."))
    var tracing = false
    @Option(
        help: .setting(
            "otlp-endpoint",
            "With --tracing: export spans through swift-otel over OTLP/HTTP (protobuf, or http/json with OTEL_EXPORTER_OTLP_PROTOCOL) to this http:// or https:// URL, used as it is, e.g. http://127.0.0.1:4318/v1/traces (or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces). Default: off."
        ))
    var otlpEndpoint: String?
    @Option(help: .setting("otlp-schedule-delay-ms", "Milliseconds a finished span may wait before its batch is exported. Default: 5000."))
    var otlpScheduleDelayMs: Int?
    @Option(help: .setting("otlp-timeout-ms", "Milliseconds one batch export may take, retries included, and the final flush at shutdown. Default: 10000."))
    var otlpTimeoutMs: Int?
    @Option(
        help: .setting(
            "trace-sample-ratio",
            "Fraction of root traces (jobs without a valid traceparent; a traceparent's sampled flag decides for the others) recorded, 0 to 1. Default: 1."))
    var traceSampleRatio: Double?
    @Option(help: .setting("tenant-label-limit", "Tenants that get their own tenant label in /metrics; the rest count as \"other\". Default: 20."))
    var tenantLabelLimit: Int?
    @Option(help: .setting("slot-count-interval", "Seconds between counts of the lease slots in use, for /metrics. Default: 15."))
    var slotCountInterval: Double?
    @Option(help: .setting("admin-port", "Admin port for /healthz, /readyz and /metrics. Default: off."))
    var adminPort: Int?
    @Option(help: .setting("cache-ttl", "Seconds a worker caches tenants, wrapped keys and policies (single-flight); 0 turns the cache off. Default: 2."))
    var cacheTtl: Double?
    @Flag(help: .setting("scheduling", "Serve jobs first in, first out: no priority classes, tenant weights or shedding (docs/scheduling.md)."))
    var noScheduling = false
    @Option(
        name: .customLong("tenant-weight"),
        help: .setting("tenant-weights", "TENANT=WEIGHT: a tenant's share of the worker inside a priority class; repeatable. Default: 1."))
    var tenantWeights: [String] = []
    @Option(help: .setting("prefetch-max-wait", "Seconds a prefetch job may wait before it is shed with a retry-after hint. Default: 1."))
    var prefetchMaxWait: Double?
    @Option(help: .setting("new-session-max-wait", "Seconds a new-session job may wait before it is shed with a retry-after hint. Default: 30."))
    var newSessionMaxWait: Double?
    @Option(
        help: .setting(
            "new-session-share",
            "Least share of every batch that goes to queued new sessions while continuity has a backlog (their floor), more than 0 to 0.5. Default: 0.125."))
    var newSessionShare: Double?
    @Option(
        help: .setting(
            "prefetch-share", "Least share of every batch that goes to queued prefetch jobs, 0 to 0.5; with new-session-share at most 0.5. Default: 0.015625."))
    var prefetchShare: Double?
    @Option(
        help: .setting(
            "rotation-lead", "Seconds before a key-rotation boundary the next key is prefetched (needs the cache); 0 turns prefetch off. Default: 30."))
    var rotationLead: Double?
    @Option(help: .setting("rotation-interval", "Seconds between rotation prefetch passes. Default: 5."))
    var rotationInterval: Double?
    @Option(
        help: .setting(
            "prefetch-window",
            "Seconds of the window before a rotation boundary in which each viewer is told (reply field next-key) to fetch the next key, spread per viewer; 0 advertises none. Default: 60."
        ))
    var prefetchWindow: Double?
    @Option(help: .setting("prefetch-margin", "Seconds between the prefetch window's end and the boundary, so the last answer arrives in time. Default: 10."))
    var prefetchMargin: Double?
    @Option(help: .setting("reply-ttl", "Seconds a reply is kept in Redis so a redelivered job gets the same bytes. Default: 900."))
    var replyTtl: Double?
    @Option(help: .setting("rate-window-ms", "Milliseconds of one rate window; tenants' rate-limit counts jobs per account per window. Default: 1000."))
    var rateWindowMs: Int?
    @Option(
        help: .setting(
            "max-request-bytes",
            "Largest request message in bytes; a larger one is dead-lettered (cut to this size) before any work, at most 262144. Default: 262144."))
    var maxRequestBytes: Int?
    @Option(
        help: .setting(
            "shutdown-timeout",
            "Seconds from SIGTERM until the worker has left its group: in-flight work, the final commit and leaving; keep it below the orchestrator's grace period. Default: 25."
        ))
    var shutdownTimeout: Double?
    @Flag(
        help: .setting("guards", "Turn off stored replies, rate limits and anti-replay (one Redis round trip less per batch, redelivered jobs get fresh CKCs).")
    )
    var noGuards = false

    /// The flags given, by config-file key, for ``ServeConfiguration/resolve(flags:environment:configFile:defaultInstanceID:)``.
    var flagValues: [String: ConfigFlagValue] {
        var values: [String: ConfigFlagValue] = [:]
        let strings: [(String, String?)] = [
            ("brokers", brokers), ("group", group), ("requests-topic", requestsTopic), ("replies-topic", repliesTopic),
            ("dlq-topic", dlqTopic), ("redis-url", redisURL), ("credentials", credentials), ("fpscrypto-library", fpscryptoLibrary),
            ("fpscrypto-generation", fpscryptoGeneration), ("instance-id", instanceId), ("log-level", logLevel),
            ("log-format", logFormat), ("otlp-endpoint", otlpEndpoint),
        ]
        for (key, value) in strings { if let value { values[key] = .string(value) } }
        let integers: [(String, Int?)] = [
            ("max-batch-size", maxBatchSize), ("concurrent-batches", concurrentBatches), ("max-in-flight", maxInFlight),
            ("crypto-threads", cryptoThreads), ("otlp-schedule-delay-ms", otlpScheduleDelayMs), ("otlp-timeout-ms", otlpTimeoutMs),
            ("tenant-label-limit", tenantLabelLimit), ("admin-port", adminPort), ("rate-window-ms", rateWindowMs),
            ("max-request-bytes", maxRequestBytes), ("redis-wait-replicas", redisWaitReplicas), ("redis-wait-timeout-ms", redisWaitTimeoutMs),
        ]
        for (key, value) in integers { if let value { values[key] = .integer(value) } }
        let numbers: [(String, Double?)] = [
            ("trace-sample-ratio", traceSampleRatio), ("slot-count-interval", slotCountInterval), ("cache-ttl", cacheTtl),
            ("prefetch-max-wait", prefetchMaxWait), ("new-session-max-wait", newSessionMaxWait), ("rotation-lead", rotationLead),
            ("new-session-share", newSessionShare), ("prefetch-share", prefetchShare),
            ("rotation-interval", rotationInterval), ("prefetch-window", prefetchWindow), ("prefetch-margin", prefetchMargin), ("reply-ttl", replyTtl),
            ("shutdown-timeout", shutdownTimeout),
        ]
        for (key, value) in numbers { if let value { values[key] = .number(value) } }
        if tracing { values["tracing"] = .boolean(true) }
        if noScheduling { values["scheduling"] = .boolean(false) }
        if classTopics { values["class-topics"] = .boolean(true) }
        if noGuards { values["guards"] = .boolean(false) }
        if !keks.isEmpty { values["kek"] = .list(keks) }
        if !replyTopics.isEmpty { values["reply-topics"] = .list(replyTopics) }
        if !kafkaProperties.isEmpty { values["kafka-properties"] = .list(kafkaProperties) }
        if !kafkaPropertyFiles.isEmpty { values["kafka-property-files"] = .list(kafkaPropertyFiles) }
        if !tenantWeights.isEmpty { values["tenant-weights"] = .list(tenantWeights) }
        if !protocolVersions.isEmpty { values["protocol-versions"] = .list(protocolVersions.map(String.init)) }
        if let config { values["config"] = .string(config) }
        return values
    }

    func resolve(environment env: [String: String]) throws(ServeConfigurationError) -> ServeConfiguration {
        try ServeConfiguration.resolve(
            flags: flagValues, environment: env, configFile: config,
            defaultInstanceID: ServeOptions.defaultInstanceID())
    }
}
