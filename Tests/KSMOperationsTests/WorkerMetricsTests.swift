import Kafka
import Prometheus
import Synchronization
import Testing

@testable import KSMOperations
@testable import KSMService

/// WorkerStatistics -> swift-metrics -> Prometheus text.
@Suite struct WorkerMetricsTests {
    @Test("Latency replayed into the swift-metrics timer keeps every bucket count and the sum, publish after publish")
    func histogramReplay() throws {
        let registry = PrometheusCollectorRegistry()
        let statistics = Mutex(WorkerStatistics.Snapshot())
        let metrics = WorkerMetrics(version: "t", factory: DescribedPrometheusFactory(registry: registry)) {
            WorkerMetrics.Inputs(statistics: statistics.withLock { $0 }, storeUp: true, stalled: false)
        }
        var expected = LatencyHistogram()
        for round in 0..<3 {
            var batch = LatencyHistogram()
            for seconds in [0.001, 0.0049, 0.3, 1.13, 1.2, 1.9, 2.0, 2.2, 40.0].map({ $0 * Double(round + 1) }) {
                batch.observe(seconds: seconds)
            }
            expected.merge(batch)
            statistics.withLock {
                $0.endToEndLatency["new", default: LatencyHistogram()].merge(batch)
                $0.received += 9
            }
            metrics.publish()
        }
        let text = registry.emitToString()
        for (le, count) in expected.cumulative {
            let label = le == "+Inf" ? "+Inf" : LatencyHistogram.duration(seconds: Double(le) ?? 0).bucketRepresentation
            #expect(text.contains("ksm_job_latency_seconds_bucket{class=\"new\",le=\"\(label)\"} \(count)\n"), "le=\(label)\n\(text)")
        }
        #expect(text.contains("ksm_job_latency_seconds_count{class=\"new\"} 27\n"))
        let sumLine = try #require(text.split(separator: "\n").first { $0.hasPrefix("ksm_job_latency_seconds_sum{class=\"new\"}") })
        let sum = try #require(Double(sumLine.split(separator: " ")[1]))
        #expect(abs(sum - expected.sum) < 1e-6, "\(sum) vs \(expected.sum)")
        #expect(text.contains("ksm_jobs_received_total 27\n"))
    }

    @Test("A revoked partition's lag series disappears")
    func lagSeriesGoAway() {
        let registry = PrometheusCollectorRegistry()
        let lag = Mutex<[TopicPartition: Int64]>([TopicPartition(topic: "req", partition: 0): 5, TopicPartition(topic: "req", partition: 1): 7])
        let metrics = WorkerMetrics(version: "t", factory: DescribedPrometheusFactory(registry: registry)) {
            WorkerMetrics.Inputs(
                statistics: WorkerStatistics.Snapshot(), storeUp: true, stalled: false,
                lag: lag.withLock { $0 })
        }
        #expect(registry.emitToString().contains(#"ksm_consumer_lag{topic="req",partition="1"} 7.0"#))
        lag.withLock { _ = $0.removeValue(forKey: TopicPartition(topic: "req", partition: 1)) }
        metrics.publish()
        let text = registry.emitToString()
        #expect(text.contains(#"ksm_consumer_lag{topic="req",partition="0"} 5.0"#))
        #expect(!text.contains(#"partition="1""#))
    }

    @Test("The rotation prefetcher's expected load is exported as ksm_expected_rotation_load")
    func expectedRotationLoadGauge() {
        var rotation = RotationStatus.Snapshot()
        rotation.expectedLoad = 6
        rotation.dueSchedules = 1
        let text = prometheusText(.init(statistics: WorkerStatistics().snapshot, storeUp: true, stalled: false, rotation: rotation))
        #expect(text.contains("# TYPE ksm_expected_rotation_load gauge\nksm_expected_rotation_load 6.0\n"), "\(text)")
    }
}
