import Foundation
import KSMService
import KSMTestSupport
import Licensing
import RedisStore
import Testing

/// `ksm admin put-packager-credential` and `remove-packager-credential` with the real binary
/// against a real redis-server: the token is the last line printed, only its hash is stored, and
/// a revoked one is refused.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct PackagerCredentialAdminTests {
    @Test func aTokenIsPrintedOnceStoredAsAHashAndRevoked() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let url = server.url
        let store = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        let tenant = try StoreIdentifier("acme")
        let verifier = PackagerCredentialVerifier(store: store, logger: .init(label: "ksm.test"))

        let created = try await KSMBinary.run(["admin", "put-packager-credential", "--redis-url", url, "--tenant", "acme", "--id", "mediapackage"])
        #expect(created.status == 0, "\(String(decoding: created.stderr, as: UTF8.self))")
        let lines = String(decoding: created.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        let token = try #require(lines.last)
        #expect(token.hasPrefix(PackagerToken.prefix))
        let stored = try await store.packagerCredentials(tenant: tenant)
        #expect(stored.map(\.id.value) == ["mediapackage"])
        #expect(stored.first?.tokenHash == PackagerToken.hash(Array(token.utf8)))
        #expect(await verifier.verify(authorization: "Bearer \(token)", tenant: tenant) == .accepted(credentialID: try StoreIdentifier("mediapackage")))

        let unnamed = try await KSMBinary.run(["admin", "put-packager-credential", "--redis-url", url, "--tenant", "acme"])
        #expect(unnamed.status == 0)
        #expect(try await store.packagerCredentials(tenant: tenant).count == 2)

        let revoked = try await KSMBinary.run(["admin", "remove-packager-credential", "--redis-url", url, "--tenant", "acme", "--id", "mediapackage"])
        #expect(revoked.status == 0, "\(String(decoding: revoked.stderr, as: UTF8.self))")
        #expect(await verifier.verify(authorization: "Bearer \(token)", tenant: tenant) == .refused(.noMatch))
        let again = try await KSMBinary.run(["admin", "remove-packager-credential", "--redis-url", url, "--tenant", "acme", "--id", "mediapackage"])
        #expect(again.status == 1)
        #expect(String(decoding: again.stderr, as: UTF8.self).contains("has no packager credential mediapackage"))
        let all = try await KSMBinary.run(["admin", "remove-packager-credential", "--redis-url", url, "--tenant", "acme"])
        #expect(all.status == 0)
        #expect(String(decoding: all.stdout, as: UTF8.self).contains("revoked 1 packager credential of tenant acme"))
        #expect(try await store.packagerCredentials(tenant: tenant).isEmpty)
    }
}
