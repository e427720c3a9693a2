import KSMService
import Licensing
import Logging
import Synchronization

/// Where the edge looks for a player's entitlement token: always `Authorization: Bearer`
/// (RFC 6750 section 2.1), and the header `--token-header` names and the query parameter
/// `--token-query` names when set, in that order; the first one present is the token.
package struct EdgeTokenSources: Sendable, Hashable {
    /// A header besides `Authorization` (`X-DRM-Token`); nil for none.
    package var header: String?
    /// A query parameter (`token`); nil for none.
    package var query: String?

    package init(header: String? = nil, query: String? = nil) {
        self.header = header
        self.query = query
    }

    /// The request's token; nil when none of the sources holds a non-empty one.
    package func token(in request: EdgeAdmissionRequest) -> String? {
        if let bearer = request.bearerToken { return bearer }
        if let header, let value = request.header(header)?.trimmingWhiteSpace, !value.isEmpty { return value }
        if let query, let value = request.query[query]?.trimmingWhiteSpace, !value.isEmpty { return value }
        return nil
    }
}

/// What the edge knows of a tenant, read from its record and its tenant-layer policy.
package struct EdgeTenantView: Sendable {
    /// The tenant policy's `entitlement-required`; true too when the document does not parse (the
    /// worker refuses every job then, so nothing is lost by refusing a request without a token).
    package var tokensRequired: Bool
    /// The tenant's token secrets, unwrapped; nil when they could not be (``keyringProblem``).
    package var keyring: EntitlementKeyring?
    /// Why ``keyring`` is nil (this edge lacks the tenant's key-encryption key); never a secret.
    package var keyringProblem: String?

    package init(tokensRequired: Bool, keyring: EntitlementKeyring?, keyringProblem: String? = nil) {
        self.tokensRequired = tokensRequired
        self.keyring = keyring
        self.keyringProblem = keyringProblem
    }

    /// The view of a stored record and tenant policy, unwrapping the token secrets as the worker
    /// does (``LicenseProcessor/tokenKeyring(_:keyring:)``).
    package init(record: TenantRecord, tenantPolicy: [UInt8]?, keyring: KeyEncryptionKeyring) {
        var required = false
        if let tenantPolicy {
            required = (try? PolicyDocument(json: tenantPolicy)).map { $0.entitlementRequired ?? false } ?? true
        }
        switch LicenseProcessor.tokenKeyring(record, keyring: keyring) {
        case .success(let ring): self.init(tokensRequired: required, keyring: ring)
        case .failure(let error): self.init(tokensRequired: required, keyring: nil, keyringProblem: error.reason)
        }
    }
}

/// A tenant as the edge's cache holds it.
package enum EdgeTenantLookup: Sendable {
    case known(EdgeTenantView)
    /// No tenant record under that name.
    case unknown
    /// The store could not be read; the error's text, for the log.
    case unavailable(String)

    /// A failed read, kept only ``EdgeCachedLoader/failureTimeToLive``.
    var isFailure: Bool {
        if case .unavailable = self { return true }
        return false
    }
}

/// Why the edge refused a request before Kafka: the `reason` label of
/// `ksm_edge_admission_refusals_total`, a closed set.
package enum EdgeRefusalReason: String, Sendable, Hashable, CaseIterable {
    case tokenMissing = "token_missing"
    case tokenInvalid = "token_invalid"
    case unknownTenant = "unknown_tenant"
    case storeUnavailable = "store_unavailable"
    case noKeyEncryptionKey = "no_kek"
    case badAccount = "bad_account"
    case rateLimited = "rate_limited"
}

/// The token rules of ``EntitlementAdmission`` as a pure function of the tenant, the token, the
/// headers and the clock, so each case is a unit test.
///
/// A presented token is checked whatever the policy says, by the worker's own verifier with the
/// worker's clock rules (no leeway): the worker refuses a rejected token even where none is
/// required, so refusing it here changes no answer but the status and saves the worker an RSA
/// operation. The account is the token's `sub`, the claim the worker holds the job's account to.
/// The asset claim is left to the worker, which knows the SPC's asset ID (the body is not read
/// before admission).
package enum EntitlementCheck {
    /// A decision, the account it verified (the rate limit's key) and the refusal's metric label.
    package struct Verdict: Sendable, Equatable {
        package var decision: EdgeAdmissionDecision
        /// The token's account when the token verified; nil otherwise.
        package var verifiedAccount: StoreIdentifier?
        package var refusal: EdgeRefusalReason?
    }

    /// `Retry-After` of a 503 for an unreachable store, in seconds.
    package static let retryAfterSeconds = 1

    package static func decide(
        tenant: StoreIdentifier, lookup: EdgeTenantLookup, token: String?, accountHeader: String?, nowMilliseconds: Int64
    ) -> Verdict {
        func refuse(_ status: Int, _ reason: String, _ label: EdgeRefusalReason, headers: [LicenseHTTPHeader] = []) -> Verdict {
            Verdict(decision: .refuse(status: status, reason: reason, headers: headers), verifiedAccount: nil, refusal: label)
        }
        let view: EdgeTenantView
        switch lookup {
        case .unavailable:
            // Never admitted blindly: whether a token is required is not known.
            return refuse(
                503, "the tenant store cannot be read; try again", .storeUnavailable,
                headers: [LicenseHTTPHeader(name: "Retry-After", value: "\(retryAfterSeconds)")])
        case .unknown:
            return refuse(404, "no such tenant: \(tenant.value)", .unknownTenant)
        case .known(let known):
            view = known
        }
        let realm = "realm=\"\(quotable(tenant.value))\""
        guard let token else {
            if view.tokensRequired {
                // RFC 6750 section 3.1: a request with no credentials gets no error code.
                return refuse(
                    401, EntitlementError.missing.description, .tokenMissing,
                    headers: [LicenseHTTPHeader(name: "WWW-Authenticate", value: "Bearer \(realm)")])
            }
            guard let text = accountHeader else { return Verdict(decision: .admit(account: HeaderAccountAdmission.anonymous, entitlement: "")) }
            guard let account = try? StoreIdentifier(text) else {
                return refuse(
                    400, "\(HeaderAccountAdmission.accountHeader) must be 1 to 128 bytes without white space, control characters, ':', '{' or '}'",
                    .badAccount)
            }
            return Verdict(decision: .admit(account: account, entitlement: ""))
        }
        func invalid(_ reason: String) -> Verdict {
            refuse(
                401, reason, .tokenInvalid,
                headers: [
                    LicenseHTTPHeader(
                        name: "WWW-Authenticate", value: "Bearer \(realm), error=\"invalid_token\", error_description=\"\(quotable(reason))\"")
                ])
        }
        guard let keyring = view.keyring else {
            return refuse(
                503, "this edge cannot check tenant \(tenant.value)'s tokens: \(view.keyringProblem ?? "no token keyring")", .noKeyEncryptionKey)
        }
        let verified: EntitlementToken
        do throws(EntitlementError) {
            verified = try EntitlementToken.verify(token, keyring: keyring, tenant: tenant.value, nowMilliseconds: nowMilliseconds)
        } catch {
            return invalid(error.description)
        }
        guard let account = try? StoreIdentifier(verified.claims.subject) else {
            // No job could carry it: the worker would refuse it as another account's.
            return invalid("entitlement token's sub is not a valid account identifier")
        }
        // A verified token is at most EntitlementToken.maximumLength (8 KiB), so the job, which takes
        // up to LicenseJob.maximumEntitlementLength (16 KiB), carries it.
        return Verdict(decision: .admit(account: account, entitlement: token), verifiedAccount: account)
    }

    /// `text` as an RFC 6750 quoted value may hold it: printable ASCII without `"` and `\`.
    static func quotable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value <= 0x7E && $0 != "\"" && $0 != "\\" }))
    }
}

extension EntitlementCheck.Verdict {
    init(decision: EdgeAdmissionDecision) {
        self.init(decision: decision, verifiedAccount: nil, refusal: nil)
    }
}

/// Tokens checked at the edge: the default admission of `ksm edge` with a Redis URL.
///
/// Per request: the tenant from a short-lived cache over Redis (``EdgeCachedLoader``: a few
/// seconds, bounded; an unreachable store answers 503 with `Retry-After`, never an admission), the
/// token from ``EdgeTokenSources``, the rules of ``EntitlementCheck``, then the client's rate
/// limit (``EdgeClientRateLimit``: keyed by the verified account, else the client's address).
/// A refusal is answered by the route with no job produced; each is counted by reason
/// (``EdgeAdmissionMetrics``). Logs name the tenant and the reason, never the token.
package struct EntitlementAdmission: EdgeAdmission {
    package let sources: EdgeTokenSources
    package let tenants: EdgeCachedLoader<StoreIdentifier, EdgeTenantLookup>
    package let rateLimit: EdgeClientRateLimit?
    package let metrics: EdgeAdmissionMetrics?
    package let logger: Logger
    /// Milliseconds since 1970 now: the clock tokens are checked against, as the worker's.
    package let wallClock: @Sendable () -> Int64

    /// How long a tenant read is kept: a policy or secret change reaches the edge within this.
    package static let tenantTimeToLive: Duration = .seconds(5)
    /// Tenants held at once.
    package static let tenantCapacity = 10_000

    package init(
        sources: EdgeTokenSources, tenants: EdgeCachedLoader<StoreIdentifier, EdgeTenantLookup>, rateLimit: EdgeClientRateLimit?,
        metrics: EdgeAdmissionMetrics?, logger: Logger, wallClock: @escaping @Sendable () -> Int64 = EdgeClock.wallMilliseconds
    ) {
        self.sources = sources
        self.tenants = tenants
        self.rateLimit = rateLimit
        self.metrics = metrics
        self.logger = logger
        self.wallClock = wallClock
    }

    /// The cache over a store: one read per tenant per ``tenantTimeToLive`` (the record and the
    /// tenant policy in one round trip), the token secrets unwrapped with `keyring`. A failed read
    /// and a tenant whose secrets this edge cannot open are logged here, once per load, not per
    /// request.
    package static func tenantLoader(
        store: any LicenseStore, keyring: KeyEncryptionKeyring, logger: Logger = Logger(label: "ksm.edge")
    ) -> EdgeCachedLoader<StoreIdentifier, EdgeTenantLookup> {
        EdgeCachedLoader(
            capacity: tenantCapacity, timeToLive: tenantTimeToLive, isFailure: { $0.isFailure },
            load: { tenant in
                // The record and the tenant layer come with the worker's own read; the asset is none.
                let request = StoreRequest(tenant: tenant, account: HeaderAccountAdmission.anonymous, assetID: [])
                do throws(LicenseStoreError) {
                    guard let result = try await store.fetch([request]).first else { return .unavailable("the store answered nothing") }
                    guard let record = result.tenant else { return .unknown }
                    let view = EdgeTenantView(record: record, tenantPolicy: result.tenantPolicy, keyring: keyring)
                    if let problem = view.keyringProblem {
                        logger.error(
                            "cannot open this tenant's token secrets, so a request with a token is refused 503: pass its key-encryption key with --kek",
                            metadata: ["fps.tenant": "\(tenant.value)", "error": "\(problem)"])
                    }
                    return .known(view)
                } catch {
                    logger.warning(
                        "tenant store unreachable; requests are refused 503", metadata: ["fps.tenant": "\(tenant.value)", "error": "\(error)"])
                    return .unavailable(error.description)
                }
            })
    }

    package func admit(_ request: EdgeAdmissionRequest) async -> EdgeAdmissionDecision {
        let lookup = await tenants.value(for: request.tenant)
        let verdict = EntitlementCheck.decide(
            tenant: request.tenant, lookup: lookup, token: sources.token(in: request),
            accountHeader: request.header(HeaderAccountAdmission.accountHeader), nowMilliseconds: wallClock())
        if let rateLimit, case .limited(let seconds) = rateLimit.take(request, verifiedAccount: verdict.verifiedAccount) {
            metrics?.refused(.rateLimited)
            return .refuse(
                status: 429, reason: "too many requests from this client: at most \(rateLimit.rate)",
                headers: [LicenseHTTPHeader(name: "Retry-After", value: "\(seconds)")])
        }
        if let refusal = verdict.refusal {
            metrics?.refused(refusal)
            logger.debug("request refused at admission", metadata: ["fps.tenant": "\(request.tenant.value)", "reason": "\(refusal.rawValue)"])
        }
        return verdict.decision
    }
}
