import KSMLoad
import Testing

/// How `ksm bench http` reads a process's own latency histogram from its `/metrics` text.
@Suite struct ScrapedHistogramTests {
    static let before = """
        # HELP ksm_edge_request_duration_seconds Arrival to answer.
        # TYPE ksm_edge_request_duration_seconds histogram
        ksm_edge_request_duration_seconds_bucket{outcome="answered",le="0.01"} 10
        ksm_edge_request_duration_seconds_bucket{outcome="answered",le="0.05"} 20
        ksm_edge_request_duration_seconds_bucket{outcome="answered",le="0.1"} 20
        ksm_edge_request_duration_seconds_bucket{outcome="answered",le="+Inf"} 20
        ksm_edge_request_duration_seconds_bucket{outcome="timeout",le="0.01"} 0
        ksm_edge_request_duration_seconds_bucket{outcome="timeout",le="+Inf"} 7
        ksm_edge_request_duration_seconds_sum{outcome="answered"} 0.4
        ksm_edge_request_duration_seconds_count{outcome="answered"} 20
        ksm_edge_requests_total{outcome="answered"} 20
        """
    static let after = """
        ksm_edge_request_duration_seconds_bucket{outcome="answered",le="0.01"} 10
        ksm_edge_request_duration_seconds_bucket{outcome="answered",le="0.05"} 118
        ksm_edge_request_duration_seconds_bucket{outcome="answered",le="0.1"} 119
        ksm_edge_request_duration_seconds_bucket{outcome="answered",le="+Inf"} 120
        ksm_edge_request_duration_seconds_bucket{outcome="timeout",le="0.01"} 0
        ksm_edge_request_duration_seconds_bucket{outcome="timeout",le="+Inf"} 9
        """

    @Test("A phase's quantiles are bucket bounds of what the kept series gained between two readings")
    func differenceOfTwoReadings() {
        let name = "ksm_edge_request_duration_seconds"
        let answered: (Substring) -> Bool = { $0.contains("outcome=\"answered\"") }
        let first = ScrapedHistogram(prometheusText: Self.before, name: name, keep: answered)
        let second = ScrapedHistogram(prometheusText: Self.after, name: name, keep: answered)
        #expect(first.count == 20)
        let phase = second.since(first)
        #expect(phase.count == 100)
        // 98 of the 100 in (10 ms, 50 ms], one in (50, 100], one past 100 ms.
        #expect(phase.upperBound(quantile: 0.5) == 0.05)
        #expect(phase.upperBound(quantile: 0.98) == 0.05)
        #expect(phase.upperBound(quantile: 0.99) == 0.1)
        #expect(phase.upperBound(quantile: 1) == .infinity)
        // Every series, the timeouts too, when nothing is filtered out.
        #expect(ScrapedHistogram(prometheusText: Self.after, name: name).count == 129)
        #expect(ScrapedHistogram().upperBound(quantile: 0.99) == nil)
    }

    @Test("A phase with a reading missing on either side has no figure, never one counted from the process's start")
    func missingReadingLeavesThePhaseOut() {
        let name = "ksm_edge_request_duration_seconds"
        let first = ScrapedHistogram(prometheusText: Self.before, name: name)
        let second = ScrapedHistogram(prometheusText: Self.after, name: name)
        #expect(ScrapedHistogram.phase(before: nil, after: second) == nil)
        #expect(ScrapedHistogram.phase(before: first, after: nil) == nil)
        #expect(ScrapedHistogram.phase(before: first, after: second)?.count == second.count - first.count)
    }

    @Test("Two workers' readings add up bucket by bucket")
    func readingsAdd() {
        let text = """
            ksm_job_latency_seconds_bucket{class="new",le="0.005"} 3
            ksm_job_latency_seconds_bucket{class="new",le="+Inf"} 4
            ksm_job_latency_seconds_bucket{class="continuity",le="0.005"} 1
            ksm_job_latency_seconds_bucket{class="continuity",le="+Inf"} 1
            """
        var fleet = ScrapedHistogram(prometheusText: text, name: "ksm_job_latency_seconds")
        fleet.add(ScrapedHistogram(prometheusText: text, name: "ksm_job_latency_seconds"))
        #expect(fleet.cumulative[0.005] == 8)
        #expect(fleet.count == 10)
        #expect(fleet.upperBound(quantile: 0.8) == 0.005)
        #expect(fleet.upperBound(quantile: 0.81) == .infinity)
    }
}
