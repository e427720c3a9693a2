import KSMService
import Prometheus
import Synchronization

/// `ksm edge`'s metrics, registered with help text straight on the Prometheus registry `/metrics`
/// renders: requests by tenant, class, shape and outcome; latency by outcome; requests in flight;
/// timeouts; replies no request waited for.
///
/// Bounded cardinality as ``SpekeMetrics``: the tenant label is the route's tenant only for the
/// first ``tenantLabelLimit`` tenants seen (`other` after), `unadmitted` for a request refused before
/// admission or with a route that names no valid tenant, so a caller cannot mint a series per
/// guessed name. Class and shape come from closed sets (`none` before the body was read).
package final class EdgeMetrics: Sendable {
    package let tenantLabelLimit: Int
    private let registry: PrometheusCollectorRegistry
    private let state = Mutex(State())
    private let inFlightGauge: Gauge
    private let timeoutCounter: Counter
    private let unmatchedCounter: Counter
    private let duplicateCounter: Counter
    private let undecodableCounter: Counter

    private struct State {
        var requests: [String: Counter] = [:]
        var timers: [String: DurationHistogram] = [:]
        var labelled: Set<String> = []
    }

    package static let requestsName = "ksm_edge_requests_total"
    package static let durationName = "ksm_edge_request_duration_seconds"
    package static let inFlightName = "ksm_edge_in_flight"
    package static let timeoutsName = "ksm_edge_timeouts_total"
    package static let unmatchedName = "ksm_edge_unmatched_replies_total"
    package static let duplicateName = "ksm_edge_duplicate_replies_total"
    package static let undecodableName = "ksm_edge_undecodable_replies_total"

    package init(registry: PrometheusCollectorRegistry, tenantLabelLimit: Int = 100) {
        self.registry = registry
        self.tenantLabelLimit = tenantLabelLimit
        inFlightGauge = registry.makeGauge(
            name: Self.inFlightName, labels: [], help: "License requests waiting for their reply now (at --max-in-flight the next is answered 503).")
        timeoutCounter = registry.makeCounter(
            name: Self.timeoutsName, labels: [], help: "License requests answered 504: no reply within --deadline.")
        unmatchedCounter = registry.makeCounter(
            name: Self.unmatchedName, labels: [],
            help: "Replies on this edge's topic whose correlation ID no request of this start waits for (timed out, or another start's); dropped.")
        duplicateCounter = registry.makeCounter(
            name: Self.duplicateName, labels: [], help: "Second replies for a request already answered or given up (a redelivered job); dropped.")
        undecodableCounter = registry.makeCounter(
            name: Self.undecodableName, labels: [],
            help: "Records on this edge's reply topic that are no reply (no correlation-id, or not a reply's JSON); dropped.")
    }

    /// Records one request's end.
    /// - Parameters:
    ///   - tenant: the route's tenant once admitted; nil before (counted as `unadmitted`).
    ///   - priority: the job's class; nil when no job was made.
    ///   - shape: the request shape's label (`raw`, `json`...); nil when the body was not parsed.
    package func record(tenant: String?, priority: String?, shape: String?, outcome: EdgeOutcome, duration: Duration) {
        let (counter, timer) = state.withLock { state -> (Counter, DurationHistogram) in
            var tenantLabel = tenant ?? "unadmitted"
            if let tenant, !state.labelled.contains(tenant) {
                if state.labelled.count < tenantLabelLimit { state.labelled.insert(tenant) } else { tenantLabel = "other" }
            }
            let labels = [("tenant", tenantLabel), ("class", priority ?? "none"), ("shape", shape ?? "none"), ("outcome", outcome.rawValue)]
            let key = labels.map(\.1).joined(separator: "\u{0}")
            let counter =
                state.requests[key]
                ?? registry.makeCounter(
                    name: Self.requestsName, labels: labels, help: "License requests answered by ksm edge, by tenant, class, request shape and outcome.")
            state.requests[key] = counter
            let timer =
                state.timers[outcome.rawValue]
                ?? registry.makeDurationHistogram(
                    descriptor: MetricNameDescriptor(
                        metricName: Self.durationName, unitName: "",
                        helpText: "Time from a license request's arrival at ksm edge to its answer, by outcome."),
                    labels: [("outcome", outcome.rawValue)], buckets: LatencyHistogram.bounds.map(LatencyHistogram.duration(seconds:)))
            state.timers[outcome.rawValue] = timer
            return (counter, timer)
        }
        counter.increment()
        timer.record(duration)
        if outcome == .timeout { timeoutCounter.increment() }
    }

    package func setInFlight(_ count: Int) { inFlightGauge.set(Double(count)) }
    package func unmatchedReply() { unmatchedCounter.increment() }
    package func duplicateReply() { duplicateCounter.increment() }
    package func undecodableReply() { undecodableCounter.increment() }
}

/// How a license request ended at the edge, the `outcome` label: a closed set.
package enum EdgeOutcome: String, Sendable, Hashable, CaseIterable {
    /// The worker's reply answered (a license, or the worker's refusal mapped to its status).
    case answered
    /// The request was refused before a job was made: bad route, admission, body, size.
    case rejected
    /// 503 at once: --max-in-flight requests were waiting.
    case overloaded
    /// 503: the job could not be produced (Kafka unreachable), or the edge is stopping.
    case unavailable
    /// 504: no reply within the deadline.
    case timeout
}
