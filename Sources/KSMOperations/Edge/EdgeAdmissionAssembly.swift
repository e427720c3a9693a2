import KSMService
import Logging
import Prometheus
import RedisStore

/// Builds what `ksm edge` checks requests with from its settings: with a Redis URL, tokens checked
/// at the edge (``EntitlementAdmission``) and certificates served from the store; without one,
/// ``HeaderAccountAdmission`` as before (the workers check tokens). Either way under the rate limit
/// when one is set. Everything that can refuse to start (a KEK file, the Redis URL) does so here.
package enum EdgeAdmissionAssembly {
    package struct Parts: Sendable {
        package var admission: any EdgeAdmission
        package var certificates: EdgeCertificateRoute
    }

    package static func make(_ settings: EdgeConfiguration, registry: PrometheusCollectorRegistry, logger: Logger) throws -> Parts {
        let metrics = EdgeAdmissionMetrics { name, labels, help in
            let counter = registry.makeCounter(name: name, labels: labels, help: help)
            return { counter.increment() }
        }
        let admission = settings.admission
        let rateLimit = admission.rateLimit.map { EdgeClientRateLimit(rate: $0, trustForwardedFor: admission.trustForwardedFor) }
        guard let redisURL = settings.redisURL else {
            logger.notice("no --redis-url: tokens are not checked at the edge (the workers check them); no certificates are served")
            let header: any EdgeAdmission = rateLimit.map { RateLimitedHeaderAdmission(rateLimit: $0, metrics: metrics) } ?? HeaderAccountAdmission()
            return Parts(admission: header, certificates: EdgeCertificateRoute(certificates: nil))
        }
        let keyring: KeyEncryptionKeyring
        do { keyring = try ServeConfiguration.keyring(files: admission.keyEncryptionKeyFiles) } catch { throw ServeRunner.StartError(error.description) }
        let store: RedisLicenseStore
        do {
            store = RedisLicenseStore(client: try RedisEndpoint(url: redisURL).makeClient(logger: logger))
        } catch {
            throw ServeRunner.StartError("Cannot use the Redis URL \(Redaction.redactedURL(redisURL)): \(error) Check --redis-url or KSM_REDIS_URL.")
        }
        let entitlement = EntitlementAdmission(
            sources: admission.tokenSources, tenants: EntitlementAdmission.tenantLoader(store: store, keyring: keyring, logger: logger), rateLimit: rateLimit,
            metrics: metrics, logger: logger)
        return Parts(admission: entitlement, certificates: EdgeCertificateRoute(certificates: EdgeCertificateRoute.loader(store: store)))
    }
}
