import Prometheus
import Synchronization
import Testing

@testable import KSMOperations
@testable import KSMService

/// A pause or resume librdkafka did not take shows on `/metrics` while the worker retries it.
@Suite struct FetchSwitchMetricsTests {
    @Test("failed fetch switches are counted by class and action; pending and paused classes are gauges that clear")
    func retryingSwitchIsVisible() {
        let registry = PrometheusCollectorRegistry()
        let statistics = Mutex(WorkerStatistics.Snapshot())
        let metrics = WorkerMetrics(version: "t", factory: DescribedPrometheusFactory(registry: registry)) {
            WorkerMetrics.Inputs(statistics: statistics.withLock { $0 }, storeUp: true, stalled: false)
        }
        var text = registry.emitToString()
        #expect(text.contains(#"ksm_fetch_switch_failures_total{class="new",action="resume"} 0"#), "series exist before the first failure\n\(text)")

        statistics.withLock { s in
            s.fetchSwitchFailures[WorkerStatistics.FetchSwitchKey(fetchClass: "new", action: "resume")] = 3
            s.pausedFetchClasses = ["new"]
            s.pendingFetchSwitches = ["new"]
        }
        metrics.publish()
        text = registry.emitToString()
        #expect(text.contains(#"ksm_fetch_switch_failures_total{class="new",action="resume"} 3"#), "\(text)")
        #expect(text.contains(#"ksm_fetch_switch_pending{class="new"} 1.0"#))
        #expect(text.contains(#"ksm_fetch_paused{class="new"} 1.0"#))
        #expect(text.contains(#"ksm_fetch_paused{class="continuity"} 0.0"#))

        // The resume took: nothing pending, nothing paused, the count stays.
        statistics.withLock { s in
            s.pausedFetchClasses = []
            s.pendingFetchSwitches = []
        }
        metrics.publish()
        text = registry.emitToString()
        #expect(text.contains(#"ksm_fetch_switch_pending{class="new"} 0.0"#))
        #expect(text.contains(#"ksm_fetch_paused{class="new"} 0.0"#))
        #expect(text.contains(#"ksm_fetch_switch_failures_total{class="new",action="resume"} 3"#))
    }
}
