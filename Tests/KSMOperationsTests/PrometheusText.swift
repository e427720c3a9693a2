@testable import KSMOperations
@testable import KSMService
import Prometheus

/// The `/metrics` body `ksm serve` would answer for `inputs`: a fresh registry, one publish.
func prometheusText(_ inputs: WorkerMetrics.Inputs, version: String = "test") -> String {
    let registry = PrometheusCollectorRegistry()
    _ = WorkerMetrics(version: version, factory: DescribedPrometheusFactory(registry: registry)) { inputs }
    return registry.emitToString()
}
