import Foundation
import KSMOperations
import KSMService
import Licensing
import Logging
import Prometheus
import Testing

/// What `ksm edge` checks requests with, from its settings: tokens at the edge with a Redis URL
/// (and 503, never an admission, when that Redis cannot be reached), the header admission without
/// one, the rate limit around either, and a KEK file that cannot be read stopping the start.
@Suite struct EdgeAdmissionAssemblyTests {
    static func settings(redisURL: String?, admission: EdgeAdmissionSettings = .init()) -> EdgeConfiguration {
        var settings = EdgeConfiguration(host: "127.0.0.1", port: 1, brokers: "127.0.0.1:1", redisURL: redisURL, instanceID: "test")
        settings.admission = admission
        return settings
    }

    static func request() throws -> EdgeAdmissionRequest {
        EdgeAdmissionRequest(tenant: try StoreIdentifier("acme"), headers: [(name: "X-Account", value: "carol")], clientAddress: "192.0.2.1")
    }

    @Test func withoutRedisTheHeaderAdmissionUnderTheRateLimit() async throws {
        let plain = try EdgeAdmissionAssembly.make(Self.settings(redisURL: nil), registry: PrometheusCollectorRegistry(), logger: Logger(label: "test"))
        #expect(plain.admission is HeaderAccountAdmission)
        #expect(await plain.certificates.answer(tenant: "acme", query: [:]).status == 404)
        let limited = try EdgeAdmissionAssembly.make(
            Self.settings(redisURL: nil, admission: .init(rateLimit: .init(perSecond: 1, burst: 1))), registry: PrometheusCollectorRegistry(),
            logger: Logger(label: "test"))
        #expect(await limited.admission.admit(try Self.request()) == .admit(account: try StoreIdentifier("carol"), entitlement: ""))
        guard case .refuse(429, _, _) = await limited.admission.admit(try Self.request()) else {
            Issue.record("the second request within the burst of 1 was admitted")
            return
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anUnreachableRedisRefuses503AndNeverAdmits() async throws {
        let registry = PrometheusCollectorRegistry()
        let parts = try EdgeAdmissionAssembly.make(Self.settings(redisURL: "redis://127.0.0.1:1/0"), registry: registry, logger: Logger(label: "test"))
        #expect(parts.admission is EntitlementAdmission)
        guard case .refuse(503, _, let headers) = await parts.admission.admit(try Self.request()) else {
            Issue.record("a request was not refused 503 with Redis unreachable")
            return
        }
        #expect(headers.contains(LicenseHTTPHeader(name: "Retry-After", value: "1")))
        #expect(await parts.certificates.answer(tenant: "acme", query: [:]).status == 503)
        #expect(registry.emitToString().contains("ksm_edge_admission_refusals_total{reason=\"store_unavailable\"} 1"))
    }

    @Test func aKEKFileThatCannotBeReadStopsTheStart() throws {
        #expect(throws: (any Error).self) {
            _ = try EdgeAdmissionAssembly.make(
                Self.settings(redisURL: "redis://127.0.0.1:1/0", admission: .init(keyEncryptionKeyFiles: ["kek-a": "/nonexistent/kek-a.hex"])),
                registry: PrometheusCollectorRegistry(), logger: Logger(label: "test"))
        }
    }
}
