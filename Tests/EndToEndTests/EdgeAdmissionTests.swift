import FairPlay
import FairPlayDevice
import Foundation
import KSMLoad
import KSMService
import KSMTestSupport
import Licensing
import RedisStore
import Testing
import Wire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `ksm edge` checking tokens before Kafka, with the real binaries: a tenant whose policy requires
/// tokens (`ksm admin put-policy`), requests without a token and with bad ones refused 401 at the
/// edge with no job on the requests topic, a valid token admitted for its account and its CKC
/// opened by the device, the certificate endpoint serving the DER the SPC was built for
/// (`ksm admin seed-demo` stored it), and the per-client rate limit answering 429 after the burst.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct EdgeAdmissionTests {
    static let secret = [UInt8](repeating: 0x42, count: 32)

    @Test func tokensAreCheckedAtTheEdgeAndOnlyAdmittedRequestsReachKafka() async throws {
        let fleet = try await Fleet(streams: 1, periods: 1)
        let tenant = fleet.catalog.tenant
        try await Self.requireTokens(fleet: fleet)
        try await fleet.startWorker()
        let watcher = try await FleetClient(fleet: fleet, topics: ["fps.license.requests"])
        defer { Task { await watcher.close() } }
        let (edge, port) = try await Self.startEdge(
            fleet: fleet, ["--token-header", "X-DRM-Token", "--rate-limit", "1/min", "--rate-burst", "4", "--kek", "demo-kek=\(fleet.kekPath)"])
        defer { edge.kill() }
        let url = "http://127.0.0.1:\(port)/fps/\(tenant)/license"
        let device = SimulatedDevice(trust: watcher.trust)
        let now = Int64(Date().timeIntervalSince1970)

        // No token: 401 with a challenge and no error code (RFC 6750 section 3.1).
        let (spc, _) = try Self.spc(fleet: fleet, device: device, session: 1)
        let missing = try await HTTPExchange.post(url, body: spc, headers: ["Content-Type": "application/octet-stream"])
        #expect(missing.status == 401, "\(missing.text)")
        #expect(missing.headers["www-authenticate"] == "Bearer realm=\"\(tenant)\"")
        #expect(missing.text.contains("an entitlement token is required"))

        // A forged token and an expired one: 401 invalid_token, the reason named, the token not quoted.
        let forged = Self.token(sub: "viewer-1", exp: now + 600, secret: [UInt8](repeating: 1, count: 32))
        let bad = try await HTTPExchange.post(url, body: spc, headers: ["Content-Type": "application/octet-stream", "X-DRM-Token": forged])
        #expect(bad.status == 401, "\(bad.text)")
        #expect(bad.headers["www-authenticate"]?.contains("error=\"invalid_token\"") == true)
        #expect(bad.text.contains("signature does not verify") && !bad.text.contains(forged))
        let expired = try await HTTPExchange.post(
            url, body: spc, headers: ["Content-Type": "application/octet-stream", "Authorization": "Bearer \(Self.token(sub: "viewer-1", exp: now - 60))"])
        #expect(expired.status == 401 && expired.text.contains("has expired"), "\(expired.text)")

        // A valid token: admitted for its sub, and the worker issues a CKC the device opens.
        let (good, session) = try Self.spc(fleet: fleet, device: device, session: 2)
        let admitted = try await HTTPExchange.post(
            url, body: good,
            headers: ["Content-Type": "application/octet-stream", "X-DRM-Token": Self.token(sub: "viewer-1", exp: now + 600), "X-Account": "someone-else"])
        #expect(admitted.status == 200, "\(admitted.text)")
        #expect(try CKCOpener.open(admitted.body, session: session).contentKey.count == 16)
        let slots = try await fleet.store().listSlots(
            tenant: try StoreIdentifier(tenant), account: try StoreIdentifier("viewer-1"), nowMilliseconds: LicenseProcessor.currentTimeMilliseconds())
        #expect(slots.count == 1, "the lease is the token's account's: \(slots)")

        // The certificate the SPC was built for, as seed-demo stored it; by SHA-1 too.
        let der = Array(try Data(contentsOf: KSMBinary.packageRoot.appendingPathComponent("Fixtures/test-credentials/test_certificate.der")))
        let certificate = try await HTTPExchange.get("http://127.0.0.1:\(port)/fps/\(tenant)/certificate")
        #expect(certificate.status == 200 && certificate.body == der)
        #expect(certificate.headers["content-type"] == "application/pkix-cert")
        let byHash = try await HTTPExchange.get("http://127.0.0.1:\(port)/fps/\(tenant)/certificate?hash=\(HexEncoding.encode(FairPlayCrypto.sha1(der)))")
        #expect(byHash.status == 200 && byHash.body == der)
        #expect(try await HTTPExchange.get("http://127.0.0.1:\(port)/fps/nobody/certificate").status == 404)

        // The address's bucket (burst 4) held the three refused requests; the fourth is still
        // judged, the fifth is 429 before anything else.
        #expect(try await HTTPExchange.post(url, body: spc, headers: [:]).status == 401)
        let limited = try await HTTPExchange.post(url, body: spc, headers: [:])
        #expect(limited.status == 429, "\(limited.text)")
        #expect(Int(limited.headers["retry-after"] ?? "") ?? 0 >= 1)

        // Only the admitted request became a job.
        let deadline = ContinuousClock.now + .seconds(10)
        while watcher.messages(on: "fps.license.requests").isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        try await Task.sleep(for: .seconds(1))
        #expect(watcher.messages(on: "fps.license.requests").count == 1)

        let metrics = try await HTTPExchange.get("http://127.0.0.1:\(port)/metrics").text
        for (reason, count) in [("token_missing", 2), ("token_invalid", 2), ("rate_limited", 1)] {
            #expect(metrics.contains("ksm_edge_admission_refusals_total{reason=\"\(reason)\"} \(count)"), "\(reason): \(metrics)")
        }
        #expect(await edge.terminate() == 0)
    }

    @Test func checkConfigPrintsTheAdmissionSettings() async throws {
        let result = try await KSMBinary.run(
            [
                "edge", "--check-config", "--brokers", "kafka:9092", "--redis-url", "redis://redis:6379/0", "--instance-id", "edge-1",
                "--token-header", "X-DRM-Token", "--token-query", "token", "--rate-limit", "10/s", "--rate-burst", "30", "--trust-forwarded-for",
                "--kek", "kek-a=/etc/ksm/kek-a.hex",
            ], environment: [:])
        let printed = String(decoding: result.stdout, as: UTF8.self)
        #expect(result.status == 0, "\(String(decoding: result.stderr, as: UTF8.self))")
        for line in [
            "admission          = entitlement", "token-from         = Authorization: Bearer, header X-DRM-Token, query token",
            "kek                = kek-a=/etc/ksm/kek-a.hex", "rate-limit         = 10/s, burst 30 per client", "trust-forwarded-for = true",
        ] {
            #expect(printed.contains(line), "\(line): \(printed)")
        }
        let bad = try await KSMBinary.run(
            ["edge", "--check-config", "--brokers", "kafka:9092", "--instance-id", "e", "--rate-limit", "fast", "--token-header", "X DRM"], environment: [:])
        #expect(bad.status == 64)
        let problems = String(decoding: bad.stderr, as: UTF8.self)
        #expect(problems.contains("--rate-limit") && problems.contains("--token-header"), "\(problems)")
    }

    @Test func putCertificateChecksTheBytesAndTheTenantsHashes() async throws {
        let redis = try await RedisServerProcess()
        let root = KSMBinary.packageRoot.appendingPathComponent("Fixtures/test-credentials")
        let der = Array(try Data(contentsOf: root.appendingPathComponent("test_certificate.der")))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-cert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pem = directory.appendingPathComponent("cert.pem")
        try Data(("-----BEGIN CERTIFICATE-----\n" + Base64.encode(der) + "\n-----END CERTIFICATE-----\n").utf8).write(to: pem)
        let junk = directory.appendingPathComponent("junk.der")
        try Data("not a certificate".utf8).write(to: junk)
        func put(_ tenant: String, _ path: String) async throws -> KSMBinary.Result {
            try await KSMBinary.run(["admin", "put-certificate", "--redis-url", redis.url, "--tenant", tenant, "--certificate", path])
        }
        #expect(try await put("acme", pem.path).status != 0, "no tenant yet")
        let tenant = try await KSMBinary.run([
            "admin", "put-tenant", "--redis-url", redis.url, "--tenant", "acme", "--kek-id", "kek-a", "--certificate-hash", String(repeating: "ab", count: 20),
        ])
        #expect(tenant.status == 0, "\(String(decoding: tenant.stderr, as: UTF8.self))")
        let notOwned = try await put("acme", pem.path)
        #expect(notOwned.status != 0 && String(decoding: notOwned.stderr, as: UTF8.self).contains("does not own"))
        let owner = try await KSMBinary.run([
            "admin", "put-tenant", "--redis-url", redis.url, "--tenant", "acme", "--kek-id", "kek-a", "--certificate-hash",
            HexEncoding.encode(FairPlayCrypto.sha1(der)),
        ])
        #expect(owner.status == 0)
        #expect(try await put("acme", junk.path).status != 0, "not X.509")
        let stored = try await put("acme", pem.path)
        #expect(stored.status == 0, "\(String(decoding: stored.stderr, as: UTF8.self))")
        let read = try await RedisLicenseStore(client: try RedisEndpoint(url: redis.url).makeClient()).applicationCertificates(
            tenant: try StoreIdentifier("acme"))
        #expect(read.entries.map(\.der) == [der] && read.latestSHA256 == FairPlayCrypto.sha256(der))
    }

    // MARK: - Helpers

    static func token(sub: String, exp: Int64, secret: [UInt8] = secret) -> String {
        EntitlementToken.sign(EntitlementClaims(subject: sub, assetPattern: "*", expiresAt: exp, tenant: "demo"), keyID: "k1", secret: secret)
    }

    /// An SPC for the demo catalogue's first asset, and the session that opens its CKC.
    static func spc(fleet: Fleet, device: SimulatedDevice, session: UInt64) throws -> ([UInt8], DeviceSession) {
        var options = SPCOptions()
        options.assetID = Array(fleet.catalog.assetID(stream: 0, period: 0).utf8)
        options.playback = MediaPlaybackInfo(creationDate: UInt32(Date().timeIntervalSince1970), state: .readyToPlay, sessionID: session)
        return try device.makeSPC(options)
    }

    /// Gives the demo tenant a token secret (`k1`, wrapped under the demo KEK) and adds
    /// `entitlement-required` to its tenant policy with `ksm admin put-policy`.
    static func requireTokens(fleet: Fleet) async throws {
        let store = try fleet.store()
        let tenant = try StoreIdentifier(fleet.catalog.tenant)
        let read = try #require(try await store.fetch([StoreRequest(tenant: tenant, account: try StoreIdentifier("anonymous"), assetID: [])]).first)
        var record = try #require(read.tenant)
        let (keyring, kekID) = try KeyFile.keyring(idAndPath: "demo-kek=\(fleet.kekPath)")
        record.entitlementSecrets = [try StoreIdentifier("k1"): try keyring.wrap(secret: secret, with: kekID)]
        try await store.putTenant(record)
        guard case .object(var policy)? = try? JSONValue(parsing: try #require(read.tenantPolicy)) else {
            throw ProcessFailure(description: "the demo tenant policy is not a JSON object")
        }
        policy["entitlement-required"] = .bool(true)
        let path = fleet.directory.appendingPathComponent("policy.json")
        try Data(JSONValue.object(policy).encoded()).write(to: path)
        let put = try await KSMBinary.run(["admin", "put-policy", "--redis-url", fleet.redisURL, "--tenant", fleet.catalog.tenant, path.path])
        guard put.status == 0 else { throw ProcessFailure(description: "put-policy failed: \(String(decoding: put.stderr, as: UTF8.self))") }
    }

    /// Starts `ksm edge` with Redis on a free loopback port and waits until `/readyz` answers 200.
    static func startEdge(fleet: Fleet, _ extra: [String]) async throws -> (RunningProcess, Int) {
        let port = try RedisServerProcess.freeLoopbackPort()
        let edge = try RunningProcess(
            "edge",
            [
                "edge", "--listen", "127.0.0.1:\(port)", "--brokers", fleet.bootstrap, "--redis-url", fleet.redisURL, "--instance-id",
                "admission-\(UUID().uuidString.prefix(8))", "--deadline", "10", "--log-format", "json",
            ] + extra)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let ready = try? await HTTPExchange.get("http://127.0.0.1:\(port)/readyz"), ready.status == 200 { return (edge, port) }
            guard edge.isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        edge.kill()
        throw ProcessFailure(description: "ksm edge did not become ready: \(edge.stderr.suffix(2_000))")
    }
}
