import CoreMetrics
import KSMService
import Prometheus

/// A swift-metrics factory that exposes through a `PrometheusCollectorRegistry`, giving the
/// worker's metrics (``MetricCatalog``) their help text and latency buckets.
///
/// Why not `PrometheusMetricsFactory` alone: it registers every family with an empty help text
/// (`promtool check metrics` reports each one) and its default buckets jump from 1 s to 2.5 s.
/// Names not in the catalog (a library's own metrics) go to the wrapped factory unchanged.
package struct DescribedPrometheusFactory: MetricsFactory, Sendable {
    package let registry: PrometheusCollectorRegistry
    private let fallback: PrometheusMetricsFactory
    private let latencyBuckets: [Duration]

    package init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        var fallback = PrometheusMetricsFactory(registry: registry)
        latencyBuckets = LatencyHistogram.bounds.map(LatencyHistogram.duration(seconds:))
        fallback.defaultDurationHistogramBuckets = latencyBuckets
        self.fallback = fallback
    }

    private func help(_ label: String) -> String? { MetricCatalog.byName[label]?.help }

    package func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        guard let help = help(label) else { return fallback.makeCounter(label: label, dimensions: dimensions) }
        return registry.makeCounter(name: label, labels: dimensions, help: help)
    }

    package func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        guard let help = help(label) else { return fallback.makeFloatingPointCounter(label: label, dimensions: dimensions) }
        return registry.makeCounter(name: label, labels: dimensions, help: help)
    }

    package func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard let help = help(label), !aggregate else { return fallback.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate) }
        return registry.makeGauge(name: label, labels: dimensions, help: help)
    }

    package func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        guard let help = help(label) else { return fallback.makeMeter(label: label, dimensions: dimensions) }
        return registry.makeGauge(name: label, labels: dimensions, help: help)
    }

    package func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        guard let help = help(label) else { return fallback.makeTimer(label: label, dimensions: dimensions) }
        return registry.makeDurationHistogram(name: label, labels: dimensions, buckets: latencyBuckets, help: help)
    }

    package func destroyCounter(_ handler: any CounterHandler) { fallback.destroyCounter(handler) }
    package func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { fallback.destroyFloatingPointCounter(handler) }
    package func destroyRecorder(_ handler: any RecorderHandler) { fallback.destroyRecorder(handler) }
    package func destroyMeter(_ handler: any MeterHandler) { fallback.destroyMeter(handler) }
    package func destroyTimer(_ handler: any TimerHandler) { fallback.destroyTimer(handler) }
}
