import ArgumentParser
import FairPlay
import Foundation
import KSMService
import Licensing
import Logging
import Metrics
import Prometheus
import RedisStore
import ServiceLifecycle
import Tracing

/// `ksm serve`: one KSM worker of the fleet. Configuration from a JSON file, then environment
/// variables, then flags (each overrides the one before).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run a KSM worker: consume license jobs from Kafka, answer them with Redis and publish CKCs."
    )

    @OptionGroup var options: ServeOptions

    func run() async throws {
        let settings = try options.resolve(environment: ProcessInfo.processInfo.environment)
        switch settings.logFormat {
        case .json: LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
        case .text: LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        }
        // swift-metrics -> Prometheus text on /metrics; an embedder bootstraps its own backend instead.
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(DescribedPrometheusFactory(registry: registry))
        var logger = Logger(label: "ksm.worker")
        logger.logLevel = settings.logLevel
        logger.info("worker process starting", metadata: ["allocator": "\(Allocator.description)"])

        let server = try CommandSupport.server(
            credentials: settings.credentials, library: settings.fpscryptoLibrary, generation: settings.fpscryptoGeneration, versions: settings.protocolVersions)
        let keyring = try settings.keyring()
        let redis: RedisClient
        do {
            redis = try RedisClient(configuration: try RedisClientConfiguration(url: settings.redisURL), logger: logger)
        } catch {
            throw ValidationError("redis: \(error)")
        }
        let pool = CryptoPool(threadCount: settings.cryptoThreads)
        let statistics = WorkerStatistics(tenantLabelLimit: settings.worker.tenantLabelLimit)
        // Errors are counted below the cache: only real Redis round trips that failed.
        let redisLicenseStore = RedisLicenseStore(client: redis)
        let redisStore = MeteredLicenseStore(redisLicenseStore, statistics: statistics)
        let cache = settings.cacheTTL > .zero ? CachingLicenseStore(redisStore, timeToLive: settings.cacheTTL) : nil
        let store: any LicenseStore = cache ?? redisStore
        // The guards go straight to Redis (never through the cache): stored replies and counters are
        // per job and per account, the one thing a cache must not answer.
        let guards = settings.guardsEnabled
            ? JobGuards(store: redisLicenseStore, replyTTLMilliseconds: settings.replyTTLMilliseconds, rateWindowMilliseconds: settings.rateWindowMilliseconds) : nil
        // The tracer is bootstrapped before the worker exists, so its first span already goes to it.
        let spanExport = settings.otlp.map { otlp in
            BatchSpanProcessor(exporter: OTLPHTTPExporter(configuration: otlp), configuration: otlp.batch, logger: logger)
        }
        if let otlp = settings.otlp, let spanExport {
            InstrumentationSystem.bootstrap(OTelTracer(sampler: otlp.sampler, processor: spanExport, limits: otlp.limits))
            logger.info("exporting spans", metadata: ["otlp": "\(otlp.summary)"])
        } else if settings.otlpWithoutTracing {
            logger.warning("an OTLP endpoint is configured but tracing is off: pass --tracing (or \"tracing\": true) to export spans")
        }
        let processor = LicenseProcessor(keyServer: server, store: store, keyring: keyring, pool: pool, logger: logger, guards: guards)
        let worker = LicenseWorker(configuration: settings.worker, processor: processor, logger: logger, statistics: statistics)
        let slots = LeaseSlotGauge()
        // The worker is appended last: ServiceGroup shuts services down in reverse order, one after the
        // other, so the worker hears SIGTERM first and its shutdown timeout is not eaten by the others;
        // the admin port keeps answering /healthz while it drains.
        var services: [any Service] = []
        // First in the group, so it shuts down last: it flushes the spans the worker ended while draining.
        if let spanExport { services.insert(spanExport, at: 0) }
        // Rotation prefetch (docs/scheduling.md): warms the cache with next keys before boundaries.
        let rotationStatus = RotationStatus()
        if let cache, let rotation = settings.rotation {
            services.append(RotationPrefetcher(configuration: rotation, schedules: redisLicenseStore, cache: cache, status: rotationStatus, logger: logger))
        }
        let storeHealth = StoreHealth()
        // The provisioning marker, checked beside PING: a Redis that restarted empty answers PING.
        let provisioning = StoreHealth()
        if let port = settings.adminPort {
            let metrics = WorkerMetrics(version: BuildInfo.version) {
                WorkerMetrics.Inputs(statistics: worker.statistics.snapshot, storeUp: storeHealth.isUp, storeProvisioned: provisioning.isUp,
                                     stalled: worker.isStalled, lag: worker.consumerLag, cache: cache?.statistics, slots: slots.sample,
                                     tracing: spanExport?.snapshot, rotation: rotationStatus.snapshot,
                                     process: ProcessSample.read())
            }
            services.append(AdminServer(
                port: port,
                health: { worker.isStalled ? .init(ok: false, detail: "processing loop stalled") : .init(ok: true, detail: "ok") },
                readiness: {
                    let owned = worker.statistics.snapshot.assignedPartitions
                    if owned == 0 { return .init(ok: false, detail: "no partition assigned") }
                    if !storeHealth.isUp { return .init(ok: false, detail: "redis: \(storeHealth.detail)") }
                    if !provisioning.isUp { return .init(ok: false, detail: "redis: \(provisioning.detail)") }
                    return .init(ok: true, detail: "ok: \(owned) partitions, redis up")
                },
                metrics: {
                    metrics.publish()
                    return registry.emitToString()
                },
                logger: logger))
        }
        services.append(worker)
        let group = ServiceGroup(configuration: .init(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger))
        let monitor = Task {
            await storeHealth.monitor {
                do {
                    _ = try await redis.send(["PING"])
                    return nil
                } catch {
                    statistics.storeError(operation: "ping", code: (error as? RedisError).map { "\($0.code)" } ?? "other")
                    return "\(error)"
                }
            }
        }
        let provisioningMonitor = Task {
            // One EXISTS while marked; a store provisioned before the marker existed gets it here
            // (a tenant record proves provisioning; a store that lost its data holds none).
            await provisioning.monitor(every: .seconds(5)) {
                do {
                    if try await redisLicenseStore.markProvisionedIfTenantsExist() { return nil }
                    return "no provisioning marker: Redis lost its data or was never provisioned (docs/redis.md)"
                } catch {
                    return "provisioning check failed: \((error as? LicenseStoreError)?.message ?? "\(error)")"
                }
            }
        }
        // Only with an admin port: nobody reads the gauge otherwise.
        let slotCount = Task {
            guard settings.adminPort != nil else { return }
            await slots.monitor(client: redis, every: settings.slotCountInterval) { error in
                statistics.storeError(operation: "slot_count", code: "\(error.code)")
            }
        }
        try await group.run()
        monitor.cancel()
        provisioningMonitor.cancel()
        slotCount.cancel()
        pool.shutdown()
    }
}

/// Flags of `ksm serve`, and how they combine with the config file and the environment.
struct ServeOptions: ParsableArguments {
    @Option(help: "JSON config file with the same keys as the long flags (e.g. \"brokers\", \"redis-url\", \"kek\": {\"id\": \"path\"}).")
    var config: String?
    @Option(help: "Kafka bootstrap servers (env KSM_KAFKA_BROKERS).")
    var brokers: String?
    @Option(help: "Consumer group (env KSM_KAFKA_GROUP). Default: fps-ksm.")
    var group: String?
    @Option(help: "Requests topic (env KSM_REQUESTS_TOPIC). Default: fps.license.requests.")
    var requestsTopic: String?
    @Option(help: "Replies topic (env KSM_REPLIES_TOPIC). Default: fps.license.replies.")
    var repliesTopic: String?
    @Option(help: "Dead-letter topic (env KSM_DLQ_TOPIC). Default: fps.license.dlq.")
    var dlqTopic: String?
    @Option(help: "redis://[user:pass@]host:port/db (env KSM_REDIS_URL).")
    var redisURL: String?
    @Option(help: "Apple's certificates.json shape (env KSM_CREDENTIALS).")
    var credentials: String?
    @Option(help: "Apple's libfpscrypto, for provisioning-data credentials.")
    var fpscryptoLibrary: String?
    @Option(help: "Which SDK's libfpscrypto that is: sdk26 (struct version 2, opens SPC v3) or sdk5 (struct version 1). Default: sdk26.")
    var fpscryptoGeneration: String?
    @Option(name: .customLong("kek"), help: "Key-encryption key ID=PATH (hex or raw 16/32 bytes); repeatable (env KSM_KEK_FILES=ID=PATH,...).")
    var keks: [String] = []
    @Option(name: .customLong("kafka-property"), help: "librdkafka KEY=VALUE passed through; repeatable.")
    var kafkaProperties: [String] = []
    @Option(help: "Static membership group.instance.id, e.g. the pod name (env KSM_INSTANCE_ID).")
    var instanceId: String?
    @Option(help: "Largest batch (one Redis round trip each). Default: 64.")
    var maxBatchSize: Int?
    @Option(help: "Batches processed at once. Default: 4.")
    var concurrentBatches: Int?
    @Option(help: "Jobs in flight before the consumer pauses. Default: 16384.")
    var maxInFlight: Int?
    @Option(help: "Threads for RSA and AES work. Default: the number of cores.")
    var cryptoThreads: Int?
    @Option(parsing: .upToNextOption, help: "FPS protocol versions accepted as the version a device used. Default: any, as Apple's SDK 26.")
    var protocolVersions: [UInt32] = []
    @Option(help: "trace, debug, info, notice, warning, error (env KSM_LOG_LEVEL). Default: info.")
    var logLevel: String?
    @Option(help: "text (swift-log's default lines) or json (one JSON object per line) (env KSM_LOG_FORMAT). Default: text.")
    var logFormat: String?
    @Flag(help: "Open a span per job through the bootstrapped tracer; traceparent headers pass to replies either way (README, Tracing).")
    var tracing = false
    @Option(help: "With --tracing: export spans as OTLP/HTTP JSON to this http:// URL, used as it is, e.g. http://127.0.0.1:4318/v1/traces (env OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces). Default: off.")
    var otlpEndpoint: String?
    @Option(help: "Milliseconds a finished span may wait before its batch is exported (env OTEL_BSP_SCHEDULE_DELAY). Default: 5000.")
    var otlpScheduleDelayMs: Int?
    @Option(help: "Milliseconds one batch export may take, retries included (env OTEL_EXPORTER_OTLP_TIMEOUT). Default: 10000.")
    var otlpTimeoutMs: Int?
    @Option(help: "Fraction of root traces (jobs without a valid traceparent; a traceparent's sampled flag decides for the others) recorded, 0 to 1 (env OTEL_TRACES_SAMPLER_ARG). Default: 1.")
    var traceSampleRatio: Double?
    @Option(help: "Tenants that get their own tenant label in /metrics; the rest count as \"other\". Default: 20.")
    var tenantLabelLimit: Int?
    @Option(help: "Seconds between counts of the lease slots in use, for /metrics. Default: 15.")
    var slotCountInterval: Double?
    @Option(help: "Admin port for /healthz, /readyz and /metrics (env KSM_ADMIN_PORT). Default: off.")
    var adminPort: Int?
    @Option(help: "Seconds a worker caches tenants, wrapped keys and policies (single-flight); 0 turns the cache off. Default: 2.")
    var cacheTtl: Double?
    @Flag(help: "Serve jobs first in, first out: no priority classes, tenant weights or shedding (docs/scheduling.md).")
    var noScheduling = false
    @Option(name: .customLong("tenant-weight"), help: "TENANT=WEIGHT: a tenant's share of the worker inside a priority class; repeatable. Default: 1.")
    var tenantWeights: [String] = []
    @Option(help: "Seconds a prefetch job may wait before it is shed with a retry-after hint. Default: 1.")
    var prefetchMaxWait: Double?
    @Option(help: "Seconds a new-session job may wait before it is shed with a retry-after hint. Default: 30.")
    var newSessionMaxWait: Double?
    @Option(help: "Seconds before a key-rotation boundary the next key is prefetched (needs the cache); 0 turns prefetch off (env KSM_ROTATION_LEAD). Default: 30.")
    var rotationLead: Double?
    @Option(help: "Seconds between rotation prefetch passes. Default: 5.")
    var rotationInterval: Double?
    @Option(help: "Seconds a reply is kept in Redis so a redelivered job gets the same bytes (env KSM_REPLY_TTL). Default: 900.")
    var replyTtl: Double?
    @Option(help: "Milliseconds of one rate window; tenants' rate-limit counts jobs per account per window (env KSM_RATE_WINDOW_MS). Default: 1000.")
    var rateWindowMs: Int?
    @Option(help: "Largest request message in bytes; a larger one is dead-lettered (cut to this size) before any work, at most 262144 (env KSM_MAX_REQUEST_BYTES). Default: 262144.")
    var maxRequestBytes: Int?
    @Option(help: "Seconds from SIGTERM until the worker has left its group: in-flight work, the final commit and leaving; keep it below the orchestrator's grace period (env KSM_SHUTDOWN_TIMEOUT). Default: 25.")
    var shutdownTimeout: Double?
    @Flag(help: "Turn off stored replies, rate limits and anti-replay (one Redis round trip less per batch, redelivered jobs get fresh CKCs).")
    var noGuards = false

    struct Settings {
        var worker: WorkerConfiguration
        var redisURL: String
        var credentials: String
        var fpscryptoLibrary: String?
        var fpscryptoGeneration: FPSCryptoLibrary.Generation = .default
        var keks: [String: String]
        var cryptoThreads: Int
        var protocolVersions: [UInt32]
        var logLevel: Logger.Level
        var logFormat: LogFormat = .text
        var slotCountInterval: Duration = .seconds(15)
        var adminPort: Int?
        var cacheTTL: Duration
        /// Nil: no rotation prefetch.
        var rotation: RotationPrefetchConfiguration?
        var guardsEnabled = true
        var replyTTLMilliseconds: Int64 = 15 * 60 * 1000
        var rateWindowMilliseconds: Int64 = 1000
        /// Nil: spans are not exported (no endpoint, or tracing off).
        var otlp: OTLPTracingConfiguration?
        /// An endpoint was configured without `--tracing`: worth a warning.
        var otlpWithoutTracing = false

        /// Loads every key-encryption key; refuses a file others can read.
        func keyring() throws -> KeyEncryptionKeyring {
            let keyring = KeyEncryptionKeyring()
            // Key material straight from the environment (a Kubernetes Secret as env): read once, then
            // removed from this process's environment so no child process inherits it.
            if let text = getenv("KSM_KEKS").map({ String(cString: $0) }) {
                unsetenv("KSM_KEKS")
                for pair in text.split(separator: ",") where !pair.isEmpty {
                    let (id, hex) = try ServeOptions.split(String(pair), "KSM_KEKS")
                    guard var key = [UInt8](hexString: hex), key.count == 16 || key.count == 32 else {
                        throw ValidationError("KSM_KEKS: key-encryption key \(id) is not 16 or 32 bytes of hex")
                    }
                    do {
                        try keyring.add(id: try StoreIdentifier(id), key: &key)
                    } catch {
                        throw ValidationError("key-encryption key \(id): \(error)")
                    }
                }
            }
            for (id, path) in keks.sorted(by: { $0.key < $1.key }) {
                var key = try KeyFile.read(path)
                do {
                    try keyring.add(id: try StoreIdentifier(id), key: &key)
                } catch {
                    throw ValidationError("key-encryption key \(id): \(error)")
                }
            }
            return keyring
        }
    }

    func resolve(environment env: [String: String]) throws -> Settings {
        var file: [String: Any] = [:]
        if let config {
            guard let data = FileManager.default.contents(atPath: config) else { throw ValidationError("cannot read config file \(config)") }
            do {
                guard let object = try LenientJSON.parse(Array(data)) as? [String: Any] else { throw ValidationError("config file \(config) is not a JSON object") }
                file = object
            } catch let error as LenientJSON.InvalidJSON {
                throw ValidationError("config file \(config): \(error)")
            }
        }
        func pick(_ flag: String?, _ envName: String, _ key: String) -> String? {
            flag ?? env[envName] ?? (file[key] as? String)
        }
        func pickInt(_ flag: Int?, _ key: String) -> Int? { flag ?? (file[key] as? Int) }

        guard let brokers = pick(self.brokers, "KSM_KAFKA_BROKERS", "brokers") else { throw ValidationError("no Kafka brokers: pass --brokers or set KSM_KAFKA_BROKERS") }
        guard let redisURL = pick(self.redisURL, "KSM_REDIS_URL", "redis-url") else { throw ValidationError("no Redis: pass --redis-url or set KSM_REDIS_URL") }
        guard let credentials = pick(self.credentials, "KSM_CREDENTIALS", "credentials") else { throw ValidationError("no credentials: pass --credentials or set KSM_CREDENTIALS") }

        var worker = WorkerConfiguration(brokers: brokers)
        worker.groupID = pick(group, "KSM_KAFKA_GROUP", "group") ?? worker.groupID
        worker.requestsTopic = pick(requestsTopic, "KSM_REQUESTS_TOPIC", "requests-topic") ?? worker.requestsTopic
        worker.repliesTopic = pick(repliesTopic, "KSM_REPLIES_TOPIC", "replies-topic") ?? worker.repliesTopic
        worker.deadLetterTopic = pick(dlqTopic, "KSM_DLQ_TOPIC", "dlq-topic") ?? worker.deadLetterTopic
        worker.instanceID = pick(instanceId, "KSM_INSTANCE_ID", "instance-id")
        worker.maximumBatchSize = pickInt(maxBatchSize, "max-batch-size") ?? worker.maximumBatchSize
        worker.concurrentBatches = pickInt(concurrentBatches, "concurrent-batches") ?? worker.concurrentBatches
        worker.maximumInFlight = pickInt(maxInFlight, "max-in-flight") ?? worker.maximumInFlight
        guard worker.maximumBatchSize > 0, worker.concurrentBatches > 0, worker.maximumInFlight > 0 else {
            throw ValidationError("batch size, concurrent batches and in-flight limit must be positive")
        }
        worker.scheduling.enabled = !(noScheduling || (file["scheduling"] as? Bool) == false)
        var weights = ((file["tenant-weights"] as? [String: Any]) ?? [:]).compactMapValues { ($0 as? Double) ?? ($0 as? Int).map(Double.init) }
        for pair in tenantWeights {
            let (tenant, text) = try Self.split(pair, "--tenant-weight")
            guard let weight = Double(text), weight > 0, weight.isFinite else { throw ValidationError("--tenant-weight \(tenant): weight must be a positive number, got \(text)") }
            weights[tenant] = weight
        }
        worker.scheduling.tenantWeights = weights
        func seconds(_ flag: Double?, _ key: String, default value: Duration) throws -> Duration {
            guard let s = flag ?? (file[key] as? Double) ?? (file[key] as? Int).map(Double.init) else { return value }
            guard s > 0, s.isFinite else { throw ValidationError("--\(key) must be a positive number of seconds") }
            return .milliseconds(Int64((s * 1000).rounded()))
        }
        worker.scheduling.prefetchMaximumWait = try seconds(prefetchMaxWait, "prefetch-max-wait", default: worker.scheduling.prefetchMaximumWait)
        worker.scheduling.newSessionMaximumWait = try seconds(newSessionMaxWait, "new-session-max-wait", default: worker.scheduling.newSessionMaximumWait)
        var properties = (file["kafka-properties"] as? [String: String]) ?? [:]
        for pair in kafkaProperties { let (k, v) = try Self.split(pair, "--kafka-property"); properties[k] = v }
        worker.kafkaProperties = properties

        let envRequestBytes: Int? = env["KSM_MAX_REQUEST_BYTES"].map { Int($0) ?? -1 }
        let requestBytes: Int = maxRequestBytes ?? envRequestBytes ?? (file["max-request-bytes"] as? Int) ?? worker.maximumRequestBytes
        guard (1024...LicenseJob.maximumEncodedSize).contains(requestBytes) else {
            throw ValidationError("--max-request-bytes must be 1024...\(LicenseJob.maximumEncodedSize), got \(requestBytes)")
        }
        worker.maximumRequestBytes = requestBytes
        let fileShutdown: Double? = (file["shutdown-timeout"] as? Double) ?? (file["shutdown-timeout"] as? Int).map(Double.init)
        let envShutdown: Double? = env["KSM_SHUTDOWN_TIMEOUT"].map { Double($0) ?? -1 }
        let shutdownSeconds: Double = shutdownTimeout ?? envShutdown ?? fileShutdown ?? 25
        guard shutdownSeconds >= 1, shutdownSeconds <= 3600, shutdownSeconds.isFinite else {
            throw ValidationError("--shutdown-timeout must be 1...3600 seconds, got \(shutdownSeconds)")
        }
        worker.shutdownTimeout = .milliseconds(Int64((shutdownSeconds * 1000).rounded()))

        var keks = (file["kek"] as? [String: String]) ?? [:]
        for pair in (env["KSM_KEK_FILES"] ?? "").split(separator: ",") where !pair.isEmpty {
            let (k, v) = try Self.split(String(pair), "KSM_KEK_FILES"); keks[k] = v
        }
        for pair in self.keks { let (k, v) = try Self.split(pair, "--kek"); keks[k] = v }

        let levelName = logLevel ?? env["KSM_LOG_LEVEL"] ?? (file["log-level"] as? String) ?? "info"
        guard let level = Logger.Level(rawValue: levelName) else { throw ValidationError("unknown log level \(levelName)") }
        var rotation: RotationPrefetchConfiguration? = RotationPrefetchConfiguration()
        let lead = rotationLead ?? env["KSM_ROTATION_LEAD"].flatMap { Double($0) } ?? (file["rotation-lead"] as? Double) ?? (file["rotation-lead"] as? Int).map(Double.init) ?? 30
        guard lead >= 0, lead.isFinite else { throw ValidationError("--rotation-lead must be zero or a positive number of seconds") }
        if lead == 0 { rotation = nil } else {
            rotation?.leadTime = .milliseconds(Int64((lead * 1000).rounded()))
            rotation?.interval = try seconds(rotationInterval, "rotation-interval", default: .seconds(5))
        }
        let formatName = logFormat ?? env["KSM_LOG_FORMAT"] ?? (file["log-format"] as? String) ?? "text"
        guard let format = LogFormat(rawValue: formatName) else { throw ValidationError("unknown log format \(formatName): text or json") }
        worker.tracing = tracing || (file["tracing"] as? Bool) == true
        worker.tenantLabelLimit = pickInt(tenantLabelLimit, "tenant-label-limit") ?? worker.tenantLabelLimit
        guard worker.tenantLabelLimit >= 0 else { throw ValidationError("--tenant-label-limit must not be negative") }
        let slotInterval = try seconds(slotCountInterval, "slot-count-interval", default: .seconds(15))
        let versions = !protocolVersions.isEmpty ? protocolVersions : ((file["protocol-versions"] as? [Int])?.map { UInt32($0) } ?? [])
        var settings = Settings(worker: worker, redisURL: redisURL, credentials: credentials,
                        fpscryptoLibrary: fpscryptoLibrary ?? (file["fpscrypto-library"] as? String), keks: keks,
                        cryptoThreads: pickInt(cryptoThreads, "crypto-threads") ?? ProcessInfo.processInfo.activeProcessorCount,
                        protocolVersions: versions, logLevel: level, logFormat: format, slotCountInterval: slotInterval,
                        adminPort: adminPort ?? env["KSM_ADMIN_PORT"].flatMap { Int($0) } ?? (file["admin-port"] as? Int),
                        cacheTTL: .milliseconds(Int64(((cacheTtl ?? env["KSM_CACHE_TTL"].flatMap { Double($0) } ?? (file["cache-ttl"] as? Double) ?? 2) * 1000).rounded())),
                        rotation: rotation)
        settings.fpscryptoGeneration = try CommandSupport.generation(
            fpscryptoGeneration ?? (file["fpscrypto-generation"] as? String) ?? FPSCryptoLibrary.Generation.default.name)
        settings.guardsEnabled = !(noGuards || (file["guards"] as? Bool) == false)
        let replySeconds = replyTtl ?? env["KSM_REPLY_TTL"].flatMap { Double($0) } ?? (file["reply-ttl"] as? Double) ?? (file["reply-ttl"] as? Int).map(Double.init) ?? 900
        guard replySeconds > 0, replySeconds.isFinite else { throw ValidationError("--reply-ttl must be a positive number of seconds") }
        settings.replyTTLMilliseconds = Int64((replySeconds * 1000).rounded())
        let window = rateWindowMs ?? env["KSM_RATE_WINDOW_MS"].flatMap { Int($0) } ?? (file["rate-window-ms"] as? Int) ?? 1000
        guard window > 0 else { throw ValidationError("--rate-window-ms must be positive") }
        settings.rateWindowMilliseconds = Int64(window)
        try resolveTracing(&settings, environment: env, file: file)
        return settings
    }

    static func split(_ pair: String, _ name: String) throws -> (String, String) {
        guard let eq = pair.firstIndex(of: "="), eq != pair.startIndex else { throw ValidationError("\(name) takes KEY=VALUE, got \(pair)") }
        return (String(pair[..<eq]), String(pair[pair.index(after: eq)...]))
    }
}

/// `--log-format`: swift-log's text lines or ``JSONLogHandler``'s JSON lines.
enum LogFormat: String {
    case text, json
}

/// Reads secret key files: hex text or raw bytes of 16 or 32 bytes, never readable by group or
/// others (``SecretFile``); the text read is cleansed once decoded.
enum KeyFile {
    static func read(_ path: String) throws -> [UInt8] {
        var data: [UInt8]
        do { data = try SecretFile.read(path) } catch { throw ValidationError(error.description) }
        defer { FairPlayCrypto.cleanse(&data) }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if let hex = [UInt8](hexString: text), hex.count == 16 || hex.count == 32 { return hex }
        if data.count == 16 || data.count == 32 { return data }
        throw ValidationError("key file \(path) holds neither 16 nor 32 bytes (raw or hex)")
    }
}
