import KSMOperations
import KSMService
import Licensing
import Synchronization
import Testing

/// Tokens at the edge: each rule of ``EntitlementCheck`` as a pure function, refused exactly as the
/// worker's verifier refuses, the tenant view read from a record and a policy, the token's sources,
/// the cache, and the admission over a real in-memory store.
@Suite struct EntitlementAdmissionTests {
    static let secret = [UInt8](repeating: 0x5A, count: 32)
    static let now: Int64 = 1_800_000_000_000
    static let tenant = id("acme")

    static func id(_ text: String) -> StoreIdentifier {
        guard let identifier = try? StoreIdentifier(text) else { preconditionFailure("\(text) is not an identifier") }
        return identifier
    }

    static func ring() throws -> EntitlementKeyring { try EntitlementKeyring(["k1": secret]) }

    static func view(required: Bool) throws -> EdgeTenantView { EdgeTenantView(tokensRequired: required, keyring: try ring()) }

    static func token(
        sub: String = "alice", exp: Int64 = now / 1000 + 600, nbf: Int64? = nil, tenant: String? = nil, kid: String = "k1", secret: [UInt8] = secret
    ) -> String {
        EntitlementToken.sign(
            EntitlementClaims(subject: sub, assetPattern: "*", expiresAt: exp, notBefore: nbf, tenant: tenant), keyID: kid, secret: secret)
    }

    static func decide(_ lookup: EdgeTenantLookup, token: String?, account: String? = nil) -> EntitlementCheck.Verdict {
        EntitlementCheck.decide(tenant: tenant, lookup: lookup, token: token, accountHeader: account, nowMilliseconds: now)
    }

    static func header(_ verdict: EntitlementCheck.Verdict, _ name: String) -> String? {
        guard case .refuse(_, _, let headers) = verdict.decision else { return nil }
        return headers.first { $0.name == name }?.value
    }

    static func status(_ verdict: EntitlementCheck.Verdict) -> Int? {
        guard case .refuse(let status, _, _) = verdict.decision else { return nil }
        return status
    }

    static func reason(_ verdict: EntitlementCheck.Verdict) -> String? {
        guard case .refuse(_, let reason, _) = verdict.decision else { return nil }
        return reason
    }

    @Test func aValidTokenAdmitsItsSubjectCarryingTheToken() throws {
        let token = Self.token()
        let verdict = Self.decide(.known(try Self.view(required: true)), token: token, account: "mallory")
        #expect(verdict.decision == .admit(account: Self.id("alice"), entitlement: token))
        #expect(verdict.verifiedAccount == Self.id("alice") && verdict.refusal == nil)
        #expect(EntitlementToken.maximumLength <= LicenseJob.maximumEntitlementLength, "every token that verifies fits a job")
    }

    @Test func noTokenWhereOneIsRequiredIs401WithoutAnErrorCode() throws {
        let verdict = Self.decide(.known(try Self.view(required: true)), token: nil)
        #expect(Self.status(verdict) == 401 && verdict.refusal == .tokenMissing)
        #expect(Self.header(verdict, "WWW-Authenticate") == "Bearer realm=\"acme\"")
        #expect(Self.reason(verdict) == EntitlementError.missing.description)
    }

    /// Every refusal the edge makes is the worker's own for that token (same verifier, same clock,
    /// no leeway), named in the reason and the RFC 6750 challenge, and never quotes the token.
    @Test(arguments: [
        ("bad signature", token(secret: [UInt8](repeating: 1, count: 32))),
        ("expired", token(exp: now / 1000 - 1)),
        ("expired at exp", token(exp: now / 1000)),
        ("not yet valid", token(nbf: now / 1000 + 1)),
        ("wrong tenant", token(tenant: "other")),
        ("unknown kid", token(kid: "k9")),
        ("malformed", "not.a.token"),
        ("alg none", "eyJhbGciOiJub25lIn0.e30."),
    ])
    func anInvalidTokenIsRefusedAsTheWorkerRefusesIt(_ label: String, _ token: String) throws {
        let verdict = Self.decide(.known(try Self.view(required: true)), token: token)
        #expect(Self.status(verdict) == 401 && verdict.refusal == .tokenInvalid, "\(label)")
        var workerError: EntitlementError?
        do {
            _ = try EntitlementToken.verify(
                token, keyring: try Self.ring(), expecting: .init(account: "alice", asset: "skd://a", tenant: "acme"), nowMilliseconds: Self.now)
        } catch let error as EntitlementError {
            workerError = error
        }
        let expected = try #require(workerError, "the worker admits \(label)")
        #expect(Self.reason(verdict) == expected.description, "\(label)")
        let challenge = try #require(Self.header(verdict, "WWW-Authenticate"))
        #expect(challenge.hasPrefix("Bearer realm=\"acme\", error=\"invalid_token\", error_description=\""), "\(challenge)")
        #expect(!challenge.contains(token) && !(Self.reason(verdict) ?? "").contains(token))
    }

    @Test func aTokenIsCheckedEvenWhereNoneIsRequired() throws {
        let verdict = Self.decide(.known(try Self.view(required: false)), token: Self.token(exp: Self.now / 1000 - 5))
        #expect(Self.status(verdict) == 401 && Self.reason(verdict) == EntitlementError.expired.description)
        let valid = Self.token(sub: "bob")
        #expect(Self.decide(.known(try Self.view(required: false)), token: valid).decision == .admit(account: Self.id("bob"), entitlement: valid))
    }

    @Test func withoutATokenWhereNoneIsRequiredTheAccountHeaderOrAnonymous() throws {
        let view = try Self.view(required: false)
        #expect(Self.decide(.known(view), token: nil, account: "carol").decision == .admit(account: Self.id("carol"), entitlement: ""))
        #expect(Self.decide(.known(view), token: nil).decision == .admit(account: HeaderAccountAdmission.anonymous, entitlement: ""))
        #expect(Self.decide(.known(view), token: nil).verifiedAccount == nil)
        let bad = Self.decide(.known(view), token: nil, account: "a b")
        #expect(Self.status(bad) == 400 && bad.refusal == .badAccount)
    }

    @Test func unknownTenantsAnUnreachableStoreAndAMissingKEKAreRefused() throws {
        let unknown = Self.decide(.unknown, token: Self.token())
        #expect(Self.status(unknown) == 404 && unknown.refusal == .unknownTenant)
        let down = Self.decide(.unavailable("connection refused"), token: nil)
        #expect(Self.status(down) == 503 && Self.header(down, "Retry-After") == "1" && down.refusal == .storeUnavailable)
        let noKEK = Self.decide(.known(EdgeTenantView(tokensRequired: true, keyring: nil, keyringProblem: "no KEK kek-a")), token: Self.token())
        #expect(Self.status(noKEK) == 503 && noKEK.refusal == .noKeyEncryptionKey)
    }

    @Test func aSubjectThatIsNoAccountIdentifierIsRefused() throws {
        let verdict = Self.decide(.known(try Self.view(required: true)), token: Self.token(sub: "has space"))
        #expect(Self.status(verdict) == 401 && verdict.refusal == .tokenInvalid)
    }

    @Test func theViewReadsTheTenantPolicyAndUnwrapsTheSecretsUnderTheKEK() throws {
        let keyring = KeyEncryptionKeyring()
        var kek = [UInt8](repeating: 7, count: 32)
        try keyring.add(id: Self.id("kek-a"), key: &kek)
        let record = TenantRecord(
            id: Self.tenant, keyEncryptionKeyID: Self.id("kek-a"),
            entitlementSecrets: [Self.id("k1"): try keyring.wrap(secret: Self.secret, with: Self.id("kek-a"))])
        let required = EdgeTenantView(record: record, tenantPolicy: Array(#"{"entitlement-required": true}"#.utf8), keyring: keyring)
        #expect(required.tokensRequired)
        let ring = try #require(required.keyring)
        #expect(ring.keyIDs == ["k1"])
        #expect(Self.decide(.known(required), token: Self.token()).verifiedAccount == Self.id("alice"))
        #expect(!EdgeTenantView(record: record, tenantPolicy: Array(#"{"content-type": "hd"}"#.utf8), keyring: keyring).tokensRequired)
        #expect(!EdgeTenantView(record: record, tenantPolicy: nil, keyring: keyring).tokensRequired)
        // A document the worker cannot read either: refused without a token rather than admitted.
        #expect(EdgeTenantView(record: record, tenantPolicy: Array("{".utf8), keyring: keyring).tokensRequired)
        let withoutKEK = EdgeTenantView(record: record, tenantPolicy: nil, keyring: KeyEncryptionKeyring())
        #expect(withoutKEK.keyring == nil && withoutKEK.keyringProblem?.contains("kek-a") == true)
        let noSecrets = EdgeTenantView(record: TenantRecord(id: Self.tenant, keyEncryptionKeyID: Self.id("kek-b")), tenantPolicy: nil, keyring: keyring)
        #expect(noSecrets.keyring?.keyIDs == [])
    }

    @Test func theTokenComesFromBearerThenTheHeaderThenTheQuery() {
        let sources = EdgeTokenSources(header: "X-DRM-Token", query: "token")
        func request(_ headers: [(String, String)], _ query: [String: String] = [:]) -> EdgeAdmissionRequest {
            EdgeAdmissionRequest(tenant: Self.tenant, headers: headers.map { (name: $0.0, value: $0.1) }, query: query)
        }
        #expect(sources.token(in: request([("authorization", "Bearer a.b.c"), ("x-drm-token", "d.e.f")], ["token": "g"])) == "a.b.c")
        #expect(sources.token(in: request([("X-DRM-TOKEN", " d.e.f ")], ["token": "g"])) == "d.e.f")
        #expect(sources.token(in: request([("Authorization", "Basic xyz")], ["token": "g.h.i"])) == "g.h.i")
        #expect(sources.token(in: request([], ["token": ""])) == nil)
        #expect(EdgeTokenSources().token(in: request([("X-DRM-Token", "d.e.f")], ["token": "g"])) == nil)
    }

    @Test func theCacheKeepsEntriesForTheirTimeAndStaysBounded() {
        var cache = EdgeTTLCache<String, Int>(capacity: 2, timeToLive: .seconds(5))
        let start = ContinuousClock.now
        cache.store(1, for: "a", now: start)
        #expect(cache.value(for: "a", now: start + .seconds(4)) == 1)
        #expect(cache.value(for: "a", now: start + .seconds(5)) == nil)
        cache.store(2, for: "b", now: start + .seconds(1))
        cache.store(3, for: "c", now: start + .seconds(2))
        #expect(cache.count == 2 && cache.value(for: "a", now: start + .seconds(2)) == nil)
        #expect(cache.value(for: "c", now: start + .seconds(2)) == 3)
        // Expired entries go before live ones.
        cache.store(4, for: "d", now: start + .seconds(6.5))
        #expect(cache.value(for: "c", now: start + .seconds(6.5)) == 3 && cache.value(for: "d", now: start + .seconds(6.5)) == 4)
        // An entry of its own time to live (a failure: a second).
        cache.store(5, for: "e", now: start + .seconds(7), timeToLive: .seconds(1))
        #expect(cache.value(for: "e", now: start + .milliseconds(7_999)) == 5 && cache.value(for: "e", now: start + .seconds(8)) == nil)
    }

    @Test func aFailureIsKeptForItsShortTimeToLive() async throws {
        let loads = Atomic<Int>(0)
        let loader = EdgeCachedLoader<String, Int>(
            capacity: 10, timeToLive: .seconds(60), isFailure: { $0 < 0 }, failureTimeToLive: .milliseconds(200),
            load: { _ in
                loads.add(1, ordering: .relaxed)
                return -1
            })
        _ = await loader.value(for: "down")
        _ = await loader.value(for: "down")
        #expect(loads.load(ordering: .relaxed) == 1, "the store is not asked again within the failure's time to live")
        try await Task.sleep(for: .milliseconds(250))
        _ = await loader.value(for: "down")
        #expect(loads.load(ordering: .relaxed) == 2)
    }

    @Test func concurrentRequestsShareOneLoadAndFailuresAreNotKept() async {
        let loads = Atomic<Int>(0)
        let loader = EdgeCachedLoader<String, Int>(
            capacity: 10, timeToLive: .seconds(60), isFailure: { $0 < 0 }, failureTimeToLive: .zero,
            load: { key in
                loads.add(1, ordering: .relaxed)
                try? await Task.sleep(for: .milliseconds(50))
                return key == "down" ? -1 : 7
            })
        await withTaskGroup(of: Int.self) { group in
            for _ in 0..<20 { group.addTask { await loader.value(for: "acme") } }
            for await value in group { #expect(value == 7) }
        }
        #expect(loads.load(ordering: .relaxed) == 1)
        _ = await loader.value(for: "down")
        _ = await loader.value(for: "down")
        #expect(loads.load(ordering: .relaxed) == 3)
    }

    @Test func theAdmissionOverAStoreChecksTokensAndRateLimitsByVerifiedAccount() async throws {
        let store = InMemoryLicenseStore()
        let keyring = KeyEncryptionKeyring()
        var kek = [UInt8](repeating: 9, count: 16)
        try keyring.add(id: Self.id("kek-a"), key: &kek)
        try await store.putTenant(
            TenantRecord(
                id: Self.tenant, keyEncryptionKeyID: Self.id("kek-a"),
                entitlementSecrets: [Self.id("k1"): try keyring.wrap(secret: Self.secret, with: Self.id("kek-a"))]))
        try await store.putPolicy(Array(#"{"entitlement-required": true}"#.utf8), tenant: Self.tenant, assetID: nil)
        let start = ContinuousClock.now
        let clock = Mutex(start)
        let refusals = Mutex<[String]>([])
        let admission = EntitlementAdmission(
            sources: EdgeTokenSources(header: "X-DRM-Token"), tenants: EntitlementAdmission.tenantLoader(store: store, keyring: keyring),
            rateLimit: EdgeClientRateLimit(rate: .init(perSecond: 1, burst: 2), trustForwardedFor: false, clock: { clock.withLock { $0 } }),
            metrics: EdgeAdmissionMetrics { _, labels, _ in
                let reason = labels.first?.1 ?? ""
                return { refusals.withLock { $0.append(reason) } }
            },
            logger: .init(label: "test"), wallClock: { Self.now })
        let token = Self.token()
        func ask(_ headers: [(String, String)], from address: String = "192.0.2.1", tenant: StoreIdentifier = Self.tenant) async -> EdgeAdmissionDecision {
            await admission.admit(
                EdgeAdmissionRequest(tenant: tenant, headers: headers.map { (name: $0.0, value: $0.1) }, clientAddress: address))
        }
        #expect(await ask([("X-DRM-Token", token)]) == .admit(account: Self.id("alice"), entitlement: token))
        #expect(await ask([("Authorization", "Bearer \(token)")], from: "192.0.2.2") == .admit(account: Self.id("alice"), entitlement: token))
        // The account's bucket (burst 2) is spent, whatever the address.
        guard case .refuse(429, _, let headers) = await ask([("X-DRM-Token", token)], from: "192.0.2.3") else {
            Issue.record("the third request within a second was admitted")
            return
        }
        #expect(headers == [LicenseHTTPHeader(name: "Retry-After", value: "1")])
        clock.withLock { $0 = start + .seconds(1) }
        #expect(await ask([("X-DRM-Token", token)]) == .admit(account: Self.id("alice"), entitlement: token))
        // Without a token: 401, counted against the address.
        guard case .refuse(401, _, _) = await ask([]) else {
            Issue.record("a request without a token was not refused 401")
            return
        }
        guard case .refuse(404, _, _) = await ask([], tenant: Self.id("nobody")) else {
            Issue.record("an unknown tenant was not refused 404")
            return
        }
        #expect(refusals.withLock { $0 } == ["rate_limited", "token_missing", "unknown_tenant"])
    }

    @Test func settingsResolveFromFlagsAndTheEnvironment() throws {
        var problems: [ConfigurationProblem] = []
        let settings = EdgeAdmissionSettings.resolve(
            .init(tokenHeader: "X-DRM-Token", rateLimit: "10/s", kek: ["kek-a=/etc/ksm/kek-a.hex"]),
            environment: ["KSM_EDGE_TOKEN_QUERY": "token", "KSM_EDGE_RATE_BURST": "15", "KSM_EDGE_TRUST_FORWARDED_FOR": "true"], problems: &problems)
        #expect(problems.isEmpty)
        #expect(settings.tokenSources == EdgeTokenSources(header: "X-DRM-Token", query: "token"))
        #expect(settings.rateLimit == EdgeRateLimiter.Rate(perSecond: 10, burst: 15))
        #expect(settings.trustForwardedFor && settings.keyEncryptionKeyFiles == ["kek-a": "/etc/ksm/kek-a.hex"])
        let lines = settings.summaryLines(redis: true).joined(separator: "\n")
        #expect(lines.contains("rate-limit         = 10/s, burst 15 per client"), "\(lines)")
        #expect(lines.contains("token-from         = Authorization: Bearer, header X-DRM-Token, query token"))

        let defaults = EdgeAdmissionSettings.resolve(.init(), environment: [:], problems: &problems)
        #expect(problems.isEmpty && defaults.rateLimit == nil && !defaults.trustForwardedFor)
        #expect(EdgeAdmissionSettings.resolve(.init(rateLimit: "120/min"), environment: [:], problems: &problems).rateLimit == .init(perSecond: 2, burst: 4))

        _ = EdgeAdmissionSettings.resolve(
            .init(tokenHeader: "X DRM", tokenQuery: "a=b", rateLimit: "fast", trustForwardedFor: false),
            environment: ["KSM_EDGE_TRUST_FORWARDED_FOR": "maybe"], problems: &problems)
        #expect(problems.map(\.source) == ["--token-header", "--token-query", "--rate-limit", "KSM_EDGE_TRUST_FORWARDED_FOR"])
    }
}
