import Prometheus

@testable import KSMOperations
@testable import KSMService

/// The `/metrics` body `ksm serve` would answer for `inputs`: a fresh registry, one publish.
func prometheusText(_ inputs: WorkerMetrics.Inputs, version: String = "test") -> String {
    let registry = PrometheusCollectorRegistry()
    _ = WorkerMetrics(version: version, factory: DescribedPrometheusFactory(registry: registry)) { inputs }
    return registry.emitToString()
}
