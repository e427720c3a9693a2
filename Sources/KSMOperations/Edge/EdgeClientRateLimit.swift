import KSMService
import Licensing
import Synchronization

/// The edge's per-client rate limit (``EdgeRateLimiter`` under a lock): keyed by the verified
/// account when a token verified, else by the client's address, the connection's peer, or the first
/// `X-Forwarded-For` hop when ``trustForwardedFor`` is on (behind an ingress that sets it; without
/// it every request through the ingress is one client).
package final class EdgeClientRateLimit: Sendable {
    package let rate: EdgeRateLimiter.Rate
    package let trustForwardedFor: Bool
    private let limiter: Mutex<EdgeRateLimiter>
    private let clock: @Sendable () -> ContinuousClock.Instant

    package init(
        rate: EdgeRateLimiter.Rate, trustForwardedFor: Bool, capacity: Int = 100_000,
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.rate = rate
        self.trustForwardedFor = trustForwardedFor
        self.limiter = Mutex(EdgeRateLimiter(rate: rate, capacity: capacity))
        self.clock = clock
    }

    /// The bucket key of a request: `account:<tenant>/<account>` once verified, else `address:<addr>`.
    package func key(_ request: EdgeAdmissionRequest, verifiedAccount: StoreIdentifier?) -> String {
        if let verifiedAccount { return "account:\(request.tenant.value)/\(verifiedAccount.value)" }
        return "address:\(Self.clientAddress(request, trustForwardedFor: trustForwardedFor))"
    }

    /// The first `X-Forwarded-For` hop when trusted and present, else the connection's peer.
    package static func clientAddress(_ request: EdgeAdmissionRequest, trustForwardedFor: Bool) -> String {
        if trustForwardedFor, let forwarded = request.header("X-Forwarded-For"),
            let first = forwarded.split(separator: ",", omittingEmptySubsequences: false).first?.trimmingWhiteSpace, !first.isEmpty
        {
            return first
        }
        return request.clientAddress ?? "unknown"
    }

    package func take(_ request: EdgeAdmissionRequest, verifiedAccount: StoreIdentifier?) -> EdgeRateLimiter.Verdict {
        let key = key(request, verifiedAccount: verifiedAccount)
        let now = clock()
        return limiter.withLock { $0.take(key, now: now) }
    }
}

/// ``HeaderAccountAdmission`` under the rate limit, keyed by the client's address (no token is
/// verified): `ksm edge` without a Redis URL.
package struct RateLimitedHeaderAdmission: EdgeAdmission {
    package let rateLimit: EdgeClientRateLimit
    package let metrics: EdgeAdmissionMetrics?

    package init(rateLimit: EdgeClientRateLimit, metrics: EdgeAdmissionMetrics?) {
        self.rateLimit = rateLimit
        self.metrics = metrics
    }

    package func admit(_ request: EdgeAdmissionRequest) async -> EdgeAdmissionDecision {
        if case .limited(let seconds) = rateLimit.take(request, verifiedAccount: nil) {
            metrics?.refused(.rateLimited)
            return .refuse(
                status: 429, reason: "too many requests from this client: at most \(rateLimit.rate)",
                headers: [LicenseHTTPHeader(name: "Retry-After", value: "\(seconds)")])
        }
        return await HeaderAccountAdmission().admit(request)
    }
}
