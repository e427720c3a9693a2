import FairPlay
import Foundation
import KSMService
import Kafka
import Licensing
import Logging
import Prometheus
import RedisStore
import ServiceLifecycle

/// One worker process as `ksm serve` runs it, put together from a resolved ``ServeConfiguration``:
/// the credentials and keyring, Redis with its metered, cached and guarded store stack, span export,
/// the worker, rotation prefetch, the admin port with its metrics, and the store monitors, run as
/// one `ServiceGroup` until SIGTERM or SIGINT. Logging and the metrics backend are bootstrapped by
/// the caller; `registry` is what `/metrics` renders.
package enum ServeRunner {
    /// A part of the process could not start; `description` says which and what to check.
    package struct StartError: Error, CustomStringConvertible {
        package var description: String
        package init(_ description: String) { self.description = description }
    }

    /// The key server over the configured credentials (and libfpscrypto, when named).
    package static func keyServer(for settings: ServeConfiguration) throws(StartError) -> KeyServerModule {
        do {
            return try CredentialsFile.keyServer(
                credentials: settings.credentials, library: settings.fpscryptoLibrary,
                generation: settings.fpscryptoGeneration, versions: settings.protocolVersions)
        } catch {
            throw StartError(error.description)
        }
    }

    /// Runs the worker process until it is told to stop; returns once every service has stopped.
    package static func run(_ settings: ServeConfiguration, registry: PrometheusCollectorRegistry, logger: Logger) async throws {
        let server = try Self.keyServer(for: settings)
        let keyring: KeyEncryptionKeyring
        do { keyring = try settings.keyring() } catch { throw StartError(error.description) }
        // `redis://` for one server, `redis-cluster://` for a Redis Cluster (docs/redis.md).
        let redis: any RedisCommandRunner
        do {
            redis = try RedisEndpoint(url: settings.redisURL).makeClient(logger: logger)
        } catch {
            throw StartError("Cannot use the Redis URL \(Redaction.redactedURL(settings.redisURL)): \(error) Check --redis-url or KSM_REDIS_URL.")
        }
        let pool = CryptoPool(threadCount: settings.cryptoThreads)
        let statistics = WorkerStatistics(tenantLabelLimit: settings.worker.tenantLabelLimit)
        // Errors are counted below the cache: only real Redis round trips that failed.
        let redisLicenseStore = RedisLicenseStore(client: redis, durability: settings.redisDurability)
        let redisStore = MeteredLicenseStore(redisLicenseStore, statistics: statistics)
        let cache = settings.cacheTTL > .zero ? CachingLicenseStore(redisStore, timeToLive: settings.cacheTTL) : nil
        let store: any LicenseStore = cache ?? redisStore
        // The guards go straight to Redis (never through the cache): stored replies and counters are
        // per job and per account, the one thing a cache must not answer.
        let guards =
            settings.guardsEnabled
            ? JobGuards(store: redisLicenseStore, replyTTLMilliseconds: settings.replyTTLMilliseconds, rateWindowMilliseconds: settings.rateWindowMilliseconds)
            : nil
        // The tracer is bootstrapped before the worker exists, so its first span already goes to it.
        // swift-otel bootstraps InstrumentationSystem and returns its exporter, batch span processor
        // and tracer as one Service; it sees only the environment ksm did not resolve itself.
        var spanExport: (any Service)?
        if let otlp = settings.otlp {
            do {
                spanExport = try otlp.bootstrap(logger: logger, environment: ProcessInfo.processInfo.environment)
            } catch {
                throw StartError("Cannot start span export: \(error) Check the tracing settings (docs/operations.md, \"Tracing\").")
            }
            logger.info("exporting spans", metadata: ["otlp": "\(otlp.summary)"])
        } else if settings.otlpWithoutTracing {
            logger.warning("an OTLP endpoint is configured but tracing is off: pass --tracing (or \"tracing\": true) to export spans")
        }
        var processor = LicenseProcessor(keyServer: server, store: store, keyring: keyring, pool: pool, logger: logger, guards: guards)
        // The advertised prefetch window (docs/scheduling.md): the prefetcher's passes keep the
        // schedules in memory, so a batch reads them without a Redis round trip of its own.
        let adviceSchedules = cache != nil && settings.rotation != nil && settings.prefetchWindow.isEnabled ? RotationScheduleCache() : nil
        if let adviceSchedules { processor.prefetchAdvisor = PrefetchAdvisor(window: settings.prefetchWindow, schedules: adviceSchedules) }
        let worker = LicenseWorker(configuration: settings.worker, processor: processor, logger: logger, statistics: statistics)
        let slots = LeaseSlotGauge()
        // The worker is appended last: ServiceGroup shuts services down in reverse order, one after the
        // other, so the worker hears SIGTERM first and its shutdown timeout is not eaten by the others;
        // the admin port keeps answering /healthz while it drains.
        var services: [any Service] = []
        // First in the group, so it shuts down last: swift-otel's batch processor flushes the spans the
        // worker ended while draining (bounded by --otlp-timeout-ms), then its exporter shuts down.
        if let spanExport { services.insert(spanExport, at: 0) }
        // Rotation prefetch (docs/scheduling.md): warms the cache with next keys before boundaries.
        let rotationStatus = RotationStatus()
        if let cache, let rotation = settings.rotation {
            var prefetcher = RotationPrefetcher(configuration: rotation, schedules: redisLicenseStore, cache: cache, status: rotationStatus, logger: logger)
            prefetcher.adviceSchedules = adviceSchedules
            // Schedules are known a lead time before their window opens, so players hear of it in time.
            let window = settings.prefetchWindow
            prefetcher.adviceHorizon = rotation.leadTime + .milliseconds(window.windowMilliseconds + window.marginMilliseconds)
            services.append(prefetcher)
        }
        let storeHealth = StoreHealth()
        // The provisioning marker, checked beside PING: a Redis that restarted empty answers PING.
        let provisioning = StoreHealth()
        if let port = settings.adminPort {
            let metrics = WorkerMetrics(version: KSMVersion.current) {
                var inputs = WorkerMetrics.Inputs(
                    statistics: worker.statistics.snapshot, storeUp: storeHealth.isUp, storeProvisioned: provisioning.isUp,
                    stalled: worker.isStalled, lag: worker.consumerLag, cache: cache?.statistics, slots: slots.sample,
                    rotation: rotationStatus.snapshot,
                    process: ProcessSample.read())
                inputs.lagByClass = worker.consumerLagByClass
                return inputs
            }
            @Sendable func readiness() -> AdminServer.Probe {
                let owned = worker.statistics.snapshot.assignedPartitions
                if owned == 0 { return .init(ok: false, detail: "no partition assigned") }
                if !storeHealth.isUp { return .init(ok: false, detail: "redis: \(storeHealth.detail)") }
                if !provisioning.isUp { return .init(ok: false, detail: "redis: \(provisioning.detail)") }
                return .init(ok: true, detail: "ok: \(owned) partitions, redis up")
            }
            services.append(
                AdminServer(
                    port: port,
                    health: { worker.isStalled ? .init(ok: false, detail: "processing loop stalled") : .init(ok: true, detail: "ok") },
                    readiness: readiness,
                    metrics: {
                        metrics.publish()
                        return registry.emitToString()
                    },
                    status: {
                        let s = worker.statistics.snapshot
                        return WorkerStatus(
                            ready: readiness().ok, stalled: worker.isStalled, assignedPartitions: s.assignedPartitions,
                            partitionChanges: s.partitionChanges, received: s.received, replied: s.replied)
                    },
                    logger: logger))
        }
        services.append(worker)
        let group = ServiceGroup(
            configuration: .init(
                services: services, gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger))
        let monitor = Task {
            await storeHealth.monitor {
                do {
                    // Every master of a cluster: a job may need any of them.
                    for node in try await redis.masterClients() { _ = try await node.send(["PING"]) }
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
