import CoreMetrics
import KSMService
import Prometheus

/// A swift-metrics factory that exposes through a `PrometheusCollectorRegistry`, giving the
/// worker's metrics (``MetricCatalog``) their help text and latency buckets.
///
/// Why not `PrometheusMetricsFactory` alone: it registers every family with an empty help text
/// (`promtool check metrics` reports each one) and its default buckets jump from 1 s to 2.5 s.
/// Names not in the catalog (a library's own metrics) go to the wrapped factory unchanged.
public struct DescribedPrometheusFactory: MetricsFactory, Sendable {
    public let registry: PrometheusCollectorRegistry
    private let fallback: PrometheusMetricsFactory
    private let latencyBuckets: [Duration]

    public init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        var fallback = PrometheusMetricsFactory(registry: registry)
        latencyBuckets = LatencyHistogram.bounds.map(LatencyHistogram.duration(seconds:))
        fallback.defaultDurationHistogramBuckets = latencyBuckets
        self.fallback = fallback
    }

    private func help(_ label: String) -> String? { MetricCatalog.byName[label]?.help }

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        guard let help = help(label) else { return fallback.makeCounter(label: label, dimensions: dimensions) }
        return registry.makeCounter(name: label, labels: dimensions, help: help)
    }

    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        guard let help = help(label) else { return fallback.makeFloatingPointCounter(label: label, dimensions: dimensions) }
        return registry.makeCounter(name: label, labels: dimensions, help: help)
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard let help = help(label), !aggregate else { return fallback.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate) }
        return registry.makeGauge(name: label, labels: dimensions, help: help)
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        guard let help = help(label) else { return fallback.makeMeter(label: label, dimensions: dimensions) }
        return registry.makeGauge(name: label, labels: dimensions, help: help)
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        guard let help = help(label) else { return fallback.makeTimer(label: label, dimensions: dimensions) }
        return registry.makeDurationHistogram(name: label, labels: dimensions, buckets: latencyBuckets, help: help)
    }

    public func destroyCounter(_ handler: any CounterHandler) { fallback.destroyCounter(handler) }
    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { fallback.destroyFloatingPointCounter(handler) }
    public func destroyRecorder(_ handler: any RecorderHandler) { fallback.destroyRecorder(handler) }
    public func destroyMeter(_ handler: any MeterHandler) { fallback.destroyMeter(handler) }
    public func destroyTimer(_ handler: any TimerHandler) { fallback.destroyTimer(handler) }
}
