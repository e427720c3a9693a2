/// `ksm_edge_admission_refusals_total{reason}`: requests the edge refused before Kafka.
package final class EdgeAdmissionMetrics: Sendable {
    private let counters: [EdgeRefusalReason: @Sendable () -> Void]

    package static let refusalsName = "ksm_edge_admission_refusals_total"

    /// - Parameter makeCounter: registers one counter with its labels and returns its increment.
    package init(makeCounter: (_ name: String, _ labels: [(String, String)], _ help: String) -> @Sendable () -> Void) {
        var counters: [EdgeRefusalReason: @Sendable () -> Void] = [:]
        for reason in EdgeRefusalReason.allCases {
            counters[reason] = makeCounter(
                Self.refusalsName, [("reason", reason.rawValue)],
                "License requests ksm edge refused before producing a job, by reason (token, tenant, store, rate limit).")
        }
        self.counters = counters
    }

    package func refused(_ reason: EdgeRefusalReason) { counters[reason]?() }
}
