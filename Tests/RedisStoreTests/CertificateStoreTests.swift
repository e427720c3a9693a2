import KSMTestSupport
import Licensing
import Testing

@testable import RedisStore

/// Application certificates through a real redis-server (and the shared cluster): stored under
/// their SHA-256, the last one named `latest`, read back in hash order, in the tenant's slot.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct CertificateStoreTests {
    static func id(_ text: String) -> StoreIdentifier {
        guard let identifier = try? StoreIdentifier(text) else { preconditionFailure("\(text) is not an identifier") }
        return identifier
    }

    @Test func theKeySitsInTheTenantsSlot() {
        #expect(HashSlot.of(RedisKeys.certificates(Self.id("acme")).bytes) == HashSlot.of(RedisKeys.tenant(Self.id("acme")).bytes))
    }

    @Test("stored by SHA-256, the last put is latest, per tenant; a bad field is corrupt", arguments: RedisBackend.allCases)
    func roundTrip(backend: RedisBackend) async throws {
        try await backend.withStore { store in
            let tenant = Self.id("acme")
            let (a, b) = ([UInt8](repeating: 0xA0, count: 32), [UInt8](repeating: 0x0B, count: 32))
            #expect(try await store.applicationCertificates(tenant: tenant) == StoredApplicationCertificates(entries: [], latestSHA256: nil))
            try await store.putApplicationCertificate([1, 2, 3], sha256: a, tenant: tenant)
            try await store.putApplicationCertificate([4, 5], sha256: b, tenant: tenant)
            let both = try await store.applicationCertificates(tenant: tenant)
            #expect(both.entries == [.init(sha256: b, der: [4, 5]), .init(sha256: a, der: [1, 2, 3])])
            #expect(both.latestSHA256 == b)
            try await store.putApplicationCertificate([1, 2, 3], sha256: a, tenant: tenant)
            #expect(try await store.applicationCertificates(tenant: tenant).latestSHA256 == a)
            #expect(try await store.applicationCertificates(tenant: Self.id("globex")).entries == [], "per tenant")

            _ = try await store.client.send(["HSET", RedisKeys.certificates(tenant), "not-hex", "x"])
            await #expect(throws: LicenseStoreError.self) { try await store.applicationCertificates(tenant: tenant) }
        }
    }
}
