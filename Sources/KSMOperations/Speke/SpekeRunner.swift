import KSMService
import Licensing
import Logging
import Prometheus
import RedisStore
import ServiceLifecycle
import Speke

/// `ksm speke` put together from a resolved ``SpekeConfiguration``: the keyring, one Redis client
/// (the store of tenants, keys, period logs, rotation schedules and packager credentials), the
/// Redis PING monitor that `/readyz` reads, and the HTTP server, as one `ServiceGroup` that runs
/// until SIGTERM or SIGINT. The TLS configuration comes in already read
/// (``SpekeConfiguration/tlsConfiguration()``): a file that cannot be used is a configuration
/// mistake, reported before anything starts. Stateless: every answer is read from, or claimed in, Redis, so any
/// number of instances serve the same tenants. Logging and the metrics backend are bootstrapped
/// by the caller; `registry` is what `/metrics` renders.
package enum SpekeRunner {
    /// How long requests in flight may take to finish after SIGTERM before they are cancelled;
    /// below Kubernetes' default 30 s grace period.
    package static let shutdownTimeout: Duration = .seconds(20)

    /// Runs the service until it is told to stop; returns once every service has stopped.
    package static func run(
        _ settings: SpekeConfiguration, tls: ServerTLS? = nil, registry: PrometheusCollectorRegistry, logger: Logger
    ) async throws {
        let services = try makeServices(settings, tls: tls, registry: registry, logger: logger)
        var configuration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger)
        configuration.maximumGracefulShutdownDuration = shutdownTimeout
        try await ServiceGroup(configuration: configuration).run()
    }

    /// Every service, in start order (the group stops them in reverse: the server first, so
    /// requests in flight still find Redis monitored). Everything that can refuse to start does so
    /// before the first connection.
    static func makeServices(
        _ settings: SpekeConfiguration, tls: ServerTLS?, registry: PrometheusCollectorRegistry, logger: Logger
    ) throws -> [any Service] {
        let keyring: KeyEncryptionKeyring
        do { keyring = try settings.keyring() } catch { throw ServeRunner.StartError(error.description) }
        let redis: any RedisCommandRunner
        do {
            redis = try RedisEndpoint(url: settings.redisURL).makeClient(logger: logger)
        } catch {
            throw ServeRunner.StartError(
                "Cannot use the Redis URL \(Redaction.redactedURL(settings.redisURL)): \(error) Check --redis-url or KSM_REDIS_URL.")
        }
        let store = RedisLicenseStore(client: redis)
        let health = StoreHealth()
        let monitor = MonitorService("RedisPing") {
            await health.monitor {
                do {
                    for node in try await redis.masterClients() { _ = try await node.send(["PING"]) }
                    return nil
                } catch {
                    return "\(error)"
                }
            }
        }
        let provider = SpekeKeyProvider(
            verifier: PackagerCredentialVerifier(store: store, logger: logger),
            issuer: PackagerKeyIssuer(store: store, keyring: keyring, logger: logger),
            limits: XMLReadLimits(maximumBytes: settings.maximumRequestBytes),
            userAgent: "FairPlayKSM/\(KSMVersion.current)", logger: logger)
        let server = SpekeServer(
            host: settings.host, port: settings.port, provider: provider, metrics: SpekeMetrics(),
            readiness: {
                health.isUp ? .init(ok: true, detail: "ok: redis up") : .init(ok: false, detail: "redis: \(health.detail)")
            },
            renderMetrics: { registry.emitToString() }, logger: logger, tls: tls)
        return [monitor, server]
    }
}
