import FairPlay
import KSMService
import KSMTestSupport
import Licensing
import RedisStore
import Testing
import Wire

/// Packager credentials on a real redis-server: a created token is accepted as Bearer and as Basic,
/// a wrong or revoked one is refused, and no log line ever holds the token.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct PackagerCredentialTests {
    static let tenant = id("acme")

    @Test("create, verify as Bearer and Basic, refuse wrong and revoked, and never log the token")
    func lifecycle() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let store = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        let sink = LogSink()
        let verifier = PackagerCredentialVerifier(store: store, logger: sink.logger)

        let token = PackagerToken.generate()
        #expect(token.hasPrefix(PackagerToken.prefix) && token.utf8.count == PackagerToken.prefix.utf8.count + 43)
        #expect(token != PackagerToken.generate())
        let credential = PackagerCredential(id: id("pk-main"), tokenHash: PackagerToken.hash(Array(token.utf8)), createdAtMilliseconds: t0)
        try await store.putPackagerCredential(credential, tenant: Self.tenant)
        #expect(
            try await store.packagerCredentials(tenant: Self.tenant).map(\.tokenHash) == [FairPlayCrypto.sha256(Array(token.utf8))], "only the hash is stored")

        let basic = "Basic " + Base64.encode(Array("pk-main:\(token)".utf8))
        #expect(await verifier.verify(authorization: "Bearer \(token)", tenant: Self.tenant) == .accepted(credentialID: id("pk-main")))
        #expect(await verifier.verify(authorization: "bearer  \(token)", tenant: Self.tenant) == .accepted(credentialID: id("pk-main")))
        #expect(await verifier.verify(authorization: basic, tenant: Self.tenant) == .accepted(credentialID: id("pk-main")))

        let wrong = PackagerToken.generate()
        #expect(await verifier.verify(authorization: "Bearer \(wrong)", tenant: Self.tenant) == .refused(.noMatch))
        #expect(await verifier.verify(authorization: "Bearer \(token.dropLast())", tenant: Self.tenant) == .refused(.noMatch))
        #expect(await verifier.verify(authorization: "Bearer \(token)", tenant: id("globex")) == .refused(.noCredentials), "per tenant")
        let wrongUser = "Basic " + Base64.encode(Array("pk-other:\(token)".utf8))
        #expect(await verifier.verify(authorization: wrongUser, tenant: Self.tenant) == .refused(.noMatch))
        #expect(await verifier.verify(authorization: nil, tenant: Self.tenant) == .refused(.missing))
        #expect(await verifier.verify(authorization: "Token \(token)", tenant: Self.tenant) == .refused(.malformed))
        #expect(await verifier.verify(authorization: "Basic !!!", tenant: Self.tenant) == .refused(.malformed))

        // A second credential works beside the first; revoking one leaves the other.
        let second = PackagerToken.generate()
        try await store.putPackagerCredential(
            PackagerCredential(id: id("pk-backup"), tokenHash: PackagerToken.hash(Array(second.utf8)), createdAtMilliseconds: t0), tenant: Self.tenant)
        #expect(await verifier.verify(authorization: "Bearer \(second)", tenant: Self.tenant) == .accepted(credentialID: id("pk-backup")))
        #expect(try await store.removePackagerCredentials(tenant: Self.tenant, id: id("pk-main")) == 1)
        #expect(await verifier.verify(authorization: "Bearer \(token)", tenant: Self.tenant) == .refused(.noMatch), "revoked")
        #expect(await verifier.verify(authorization: basic, tenant: Self.tenant) == .refused(.noMatch), "revoked")
        #expect(await verifier.verify(authorization: "Bearer \(second)", tenant: Self.tenant) == .accepted(credentialID: id("pk-backup")))
        #expect(try await store.removePackagerCredentials(tenant: Self.tenant, id: nil) == 1)
        #expect(await verifier.verify(authorization: "Bearer \(second)", tenant: Self.tenant) == .refused(.noCredentials))

        let lines = sink.text
        #expect(lines.contains { $0.contains("refused") }, "refusals are logged")
        let secrets = [token, second, wrong, String(token.dropFirst(PackagerToken.prefix.count)), String(basic.dropFirst(6))]
        for line in lines {
            for secret in secrets { #expect(!line.contains(secret), "a log line holds a credential") }
        }
    }

    @Test("a store that cannot be read answers unavailable, not refused")
    func storeDownIsUnavailable() async throws {
        let server = try await RedisServerProcess()
        let store = RedisLicenseStore(client: try RedisClient(configuration: server.configuration(poolSize: 1)))
        server.stop()
        let verdict = await PackagerCredentialVerifier(store: store, logger: quietLogger).verify(authorization: "Bearer x", tenant: Self.tenant)
        guard case .unavailable(let error) = verdict else {
            Issue.record("expected unavailable, got \(verdict)")
            return
        }
        #expect(error.isRetriable)
    }

    @Test("the check compares with every stored hash and accepts only an exact token")
    func pureCheck() {
        let tokens = (0..<4).map { _ in PackagerToken.generate() }
        let stored = tokens.enumerated().map { n, token in
            PackagerCredential(id: id("pk-\(n)"), tokenHash: PackagerToken.hash(Array(token.utf8)), createdAtMilliseconds: 0)
        }
        for (n, token) in tokens.enumerated() {
            #expect(PackagerCredentialVerifier.check(authorization: "Bearer \(token)", against: stored) == .accepted(credentialID: id("pk-\(n)")))
            #expect(PackagerCredentialVerifier.check(authorization: "Bearer \(token)x", against: stored) == .refused(.noMatch))
            #expect(PackagerCredentialVerifier.check(authorization: "Bearer \(token.uppercased())", against: stored) == .refused(.noMatch))
        }
        #expect(PackagerCredentialVerifier.check(authorization: "Bearer ", against: stored) == .refused(.malformed))
        #expect(PackagerCredentialVerifier.check(authorization: "Bearer " + String(repeating: "a", count: 2000), against: stored) == .refused(.malformed))
        #expect("\(PackagerAuthorization(headerValue: "Bearer \(tokens[0])").map { "\($0)" } ?? "")" == "bearer credential")
    }
}
