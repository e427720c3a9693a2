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
/// the crypto pool, the worker, rotation prefetch, the admin port with its metrics, and the store
/// monitors, every one a `Service` of one `ServiceGroup` that runs until SIGTERM or SIGINT and
/// stops them all on every path. Logging and the metrics backend are bootstrapped by the caller;
/// `registry` is what `/metrics` renders.
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
        let services = try makeServices(settings, registry: registry, logger: logger)
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger))
        try await group.run()
    }

    /// Every service of the process, in start order; the group shuts them down in reverse order,
    /// one after the other. Everything that can refuse to start does so before the first thread or
    /// connection exists.
    static func makeServices(_ settings: ServeConfiguration, registry: PrometheusCollectorRegistry, logger: Logger) throws -> [any Service] {
        let server = try keyServer(for: settings)
        let keyring: KeyEncryptionKeyring
        do { keyring = try settings.keyring() } catch { throw StartError(error.description) }
        let statistics = WorkerStatistics(tenantLabelLimit: settings.worker.tenantLabelLimit)
        let stores = try ServeStores(settings, statistics: statistics, logger: logger)
        // The tracer is bootstrapped before the worker exists, so its first span already goes to it.
        let spanExport = try spanExport(settings, logger: logger)

        let pool = CryptoPool(threadCount: settings.cryptoThreads)
        var processor = LicenseProcessor(keyServer: server, store: stores.store, keyring: keyring, pool: pool, logger: logger, guards: stores.guards)
        // The advertised prefetch window (docs/scheduling.md): the prefetcher's passes keep the
        // schedules in memory, so a batch reads them without a Redis round trip of its own.
        let adviceSchedules = stores.cache != nil && settings.rotation != nil && settings.prefetchAdvice.isEnabled ? RotationScheduleCache() : nil
        if let adviceSchedules { processor.prefetchAdvisor = PrefetchAdvisor(window: settings.prefetchAdvice, schedules: adviceSchedules) }
        let worker = LicenseWorker(configuration: settings.worker, processor: processor, logger: logger, statistics: statistics)

        // First, so it shuts down last: swift-otel's batch processor flushes the spans the worker
        // ended while draining (bounded by --otlp-timeout-ms), then its exporter shuts down.
        var services: [any Service] = spanExport.map { [$0] } ?? []
        // Before the worker, so the pool's threads are handed back once the worker has drained.
        services.append(CryptoPoolService(pool: pool))
        let monitors = ServeMonitors(stores: stores, statistics: statistics)
        services += monitors.services(slotCountInterval: settings.adminPort == nil ? nil : settings.slotCountInterval)
        // Rotation prefetch (docs/scheduling.md): warms the cache with next keys before boundaries.
        let rotationStatus = RotationStatus()
        if let cache = stores.cache, let rotation = settings.rotation {
            var prefetcher = RotationPrefetcher(configuration: rotation, schedules: stores.redisStore, cache: cache, status: rotationStatus, logger: logger)
            prefetcher.adviceSchedules = adviceSchedules
            // Schedules are known a lead time before their window opens, so players hear of it in time.
            prefetcher.adviceHorizon = rotation.leadTime + settings.prefetchWindow + settings.prefetchMargin
            services.append(prefetcher)
        }
        if let port = settings.adminPort {
            let inputs = ServeAdmin(worker: worker, stores: stores, monitors: monitors, rotation: rotationStatus, registry: registry)
            services.append(inputs.server(port: port, logger: logger))
        }
        // Last: the worker hears SIGTERM first, so its shutdown timeout is not eaten by the others,
        // and the admin port keeps answering /healthz and the monitors keep /readyz current while it drains.
        services.append(worker)
        return services
    }

    /// swift-otel bootstraps InstrumentationSystem and returns its exporter, batch span processor
    /// and tracer as one Service; it sees only the environment ksm did not resolve itself.
    private static func spanExport(_ settings: ServeConfiguration, logger: Logger) throws(StartError) -> (any Service)? {
        guard let otlp = settings.otlp else {
            if settings.otlpWithoutTracing {
                logger.warning("an OTLP endpoint is configured but tracing is off: pass --tracing (or \"tracing\": true) to export spans")
            }
            return nil
        }
        let service: any Service
        do {
            service = try otlp.bootstrap(logger: logger, environment: ProcessInfo.processInfo.environment)
        } catch {
            throw StartError("Cannot start span export: \(error) Check the tracing settings (docs/operations.md, \"Tracing\").")
        }
        logger.info("exporting spans", metadata: ["otlp": "\(otlp.summary)"])
        return service
    }
}
