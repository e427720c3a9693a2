import KSMOperations
import KSMService
import Licensing
import Testing

/// The per-client token buckets: the burst, the refill, `Retry-After`, bounded memory, and how a
/// request's client key is chosen.
@Suite struct EdgeRateLimiterTests {
    @Test func aBurstThenTheRateThenARefusalWithRetryAfter() {
        var limiter = EdgeRateLimiter(rate: .init(perSecond: 2, burst: 3))
        let start = ContinuousClock.now
        for _ in 0..<3 { #expect(limiter.take("a", now: start) == .allowed) }
        #expect(limiter.take("a", now: start) == .limited(retryAfterSeconds: 1))
        #expect(limiter.take("b", now: start) == .allowed, "another client has its own bucket")
        #expect(limiter.take("a", now: start + .milliseconds(499)) == .limited(retryAfterSeconds: 1))
        #expect(limiter.take("a", now: start + .milliseconds(500)) == .allowed)
        // Long idle refills to the burst, never beyond.
        for _ in 0..<3 { #expect(limiter.take("a", now: start + .seconds(60)) == .allowed) }
        #expect(limiter.take("a", now: start + .seconds(60)) != .allowed)
    }

    @Test func retryAfterCountsWholeSecondsUntilTheNextRequest() {
        var limiter = EdgeRateLimiter(rate: .init(perSecond: 0.25, burst: 1))
        let start = ContinuousClock.now
        #expect(limiter.take("a", now: start) == .allowed)
        #expect(limiter.take("a", now: start) == .limited(retryAfterSeconds: 4))
        #expect(limiter.take("a", now: start + .seconds(1)) == .limited(retryAfterSeconds: 3))
        #expect(limiter.take("a", now: start + .seconds(4)) == .allowed)
    }

    @Test func memoryStaysBoundedAndActiveClientsKeepTheirBuckets() {
        var limiter = EdgeRateLimiter(rate: .init(perSecond: 1, burst: 1), capacity: 100)
        let start = ContinuousClock.now
        #expect(limiter.take("busy", now: start) == .allowed)
        for index in 0..<1_000 {
            _ = limiter.take("client-\(index)", now: start)
            if index.isMultiple(of: 10) { #expect(limiter.take("busy", now: start) != .allowed, "busy kept its spent bucket at \(index)") }
            #expect(limiter.count <= 100)
        }
    }

    @Test func ratesParse() {
        #expect(EdgeRateLimiter.Rate.perSecond(parsing: "10/s") == 10)
        #expect(EdgeRateLimiter.Rate.perSecond(parsing: " 90/min ") == 1.5)
        #expect(EdgeRateLimiter.Rate.perSecond(parsing: "7200/h") == 2)
        for bad in ["10", "0/s", "-1/s", "x/s", "10/day", "nan/s"] { #expect(EdgeRateLimiter.Rate.perSecond(parsing: bad) == nil, "\(bad)") }
        #expect(EdgeRateLimiter.Rate.defaultBurst(perSecond: 0.1) == 1 && EdgeRateLimiter.Rate.defaultBurst(perSecond: 10) == 20)
        #expect("\(EdgeRateLimiter.Rate(perSecond: 10, burst: 20))" == "10/s, burst 20")
        #expect("\(EdgeRateLimiter.Rate(perSecond: 1.0 / 60, burst: 4))" == "0.017/s, burst 4")
    }

    @Test func theClientKeyIsTheVerifiedAccountElseTheAddress() throws {
        let tenant = try StoreIdentifier("acme")
        let request = EdgeAdmissionRequest(
            tenant: tenant, headers: [(name: "x-forwarded-for", value: " 203.0.113.7 , 10.0.0.1")], clientAddress: "10.0.0.2")
        let direct = EdgeClientRateLimit(rate: .init(perSecond: 1, burst: 1), trustForwardedFor: false)
        let proxied = EdgeClientRateLimit(rate: .init(perSecond: 1, burst: 1), trustForwardedFor: true)
        #expect(direct.key(request, verifiedAccount: nil) == "address:10.0.0.2")
        #expect(proxied.key(request, verifiedAccount: nil) == "address:203.0.113.7")
        #expect(proxied.key(request, verifiedAccount: try StoreIdentifier("alice")) == "account:acme/alice")
        let bare = EdgeAdmissionRequest(tenant: tenant, headers: [], clientAddress: nil)
        #expect(proxied.key(bare, verifiedAccount: nil) == "address:unknown")
    }

    @Test func theHeaderAdmissionIsLimitedByAddress() async throws {
        let clock = ContinuousClock.now
        let admission = RateLimitedHeaderAdmission(
            rateLimit: EdgeClientRateLimit(rate: .init(perSecond: 1, burst: 1), trustForwardedFor: false, clock: { clock }), metrics: nil)
        let request = EdgeAdmissionRequest(tenant: try StoreIdentifier("acme"), headers: [], clientAddress: "192.0.2.9")
        #expect(await admission.admit(request) == .admit(account: HeaderAccountAdmission.anonymous, entitlement: ""))
        guard case .refuse(429, _, let headers) = await admission.admit(request) else {
            Issue.record("the second request was admitted")
            return
        }
        #expect(headers.contains(LicenseHTTPHeader(name: "Retry-After", value: "1")))
    }
}
