import CoreMetrics
import Synchronization

/// `ksm speke`'s metrics, through swift-metrics (exposed on `/metrics` by swift-prometheus, as
/// `ksm serve`'s are): requests by tenant and outcome, keys issued by tenant, and latency by outcome.
///
/// The tenant label is the route's tenant only once its credential was accepted (an unauthenticated
/// caller could otherwise mint a series per guessed name): `unauthenticated` before that, and
/// `other` past the first ``tenantLabelLimit`` tenants. Each handler is created once per label set.
package final class SpekeMetrics: Sendable {
    /// Tenants that get their own label value.
    package let tenantLabelLimit: Int
    private let state = Mutex(State())

    private struct State {
        var requests: [String: Counter] = [:]
        var keys: [String: Counter] = [:]
        var timers: [SpekeOutcome: Timer] = [:]
        /// Tenants that have their own label value.
        var labelled: Set<String> = []
    }

    package init(tenantLabelLimit: Int = 100) {
        self.tenantLabelLimit = tenantLabelLimit
    }

    /// Records one request: its outcome, how long it took and, when it succeeded, how many keys it issued.
    package func record(tenant: String, outcome: SpekeOutcome, keys: Int, duration: Duration) {
        let label: String
        switch outcome {
        case .badRoute, .unauthorized, .forbidden: label = "unauthenticated"
        default: label = tenant
        }
        let (requests, issued, timer) = state.withLock { state -> (Counter, Counter?, Timer) in
            var tenantLabel = label
            if label != "unauthenticated", !state.labelled.contains(label) {
                if state.labelled.count < tenantLabelLimit { state.labelled.insert(label) } else { tenantLabel = "other" }
            }
            let requestKey = tenantLabel + "\u{0}" + outcome.rawValue
            let requests =
                state.requests[requestKey]
                ?? Counter(label: "ksm_speke_requests_total", dimensions: [("tenant", tenantLabel), ("outcome", outcome.rawValue)])
            state.requests[requestKey] = requests
            var issued: Counter? = nil
            if keys > 0 {
                let counter = state.keys[tenantLabel] ?? Counter(label: "ksm_speke_keys_issued_total", dimensions: [("tenant", tenantLabel)])
                state.keys[tenantLabel] = counter
                issued = counter
            }
            let timer = state.timers[outcome] ?? Timer(label: "ksm_speke_request_duration_seconds", dimensions: [("outcome", outcome.rawValue)])
            state.timers[outcome] = timer
            return (requests, issued, timer)
        }
        requests.increment()
        issued?.increment(by: keys)
        timer.record(duration: duration)
    }
}
