import KSMService
import Licensing

/// Decides, before anything is produced, whether a license request is let in and for which
/// account, and what entitlement token the job carries: the seam where token verification goes.
///
/// The route calls ``admit(_:)`` once per request after reading the tenant from the path and
/// before parsing the body; a refusal is answered as it is, and no job is produced. `ksm edge`
/// uses ``EntitlementAdmission`` (tokens checked at the edge) with a Redis URL, else
/// ``HeaderAccountAdmission`` (everyone, with the `X-Account` header's account). An
/// implementation must not block (it runs on the cooperative pool) and must not log a token.
package protocol EdgeAdmission: Sendable {
    func admit(_ request: EdgeAdmissionRequest) async -> EdgeAdmissionDecision
}

/// What an admission sees of a request: the route's tenant and the request's headers.
package struct EdgeAdmissionRequest: Sendable {
    /// The route's `{tenant}`, already a valid identifier.
    package var tenant: StoreIdentifier
    /// Every header as received, names as sent (compare them case-insensitively: ``header(_:)``).
    package var headers: [(name: String, value: String)]
    /// The URL's query parameters (a token may come in one: ``EntitlementAdmission``).
    package var query: [String: String]
    /// The connection's peer address (an ingress's, behind one); nil when unknown.
    package var clientAddress: String?

    package init(
        tenant: StoreIdentifier, headers: [(name: String, value: String)], query: [String: String] = [:], clientAddress: String? = nil
    ) {
        self.tenant = tenant
        self.headers = headers
        self.query = query
        self.clientAddress = clientAddress
    }

    /// The first header named `name`, compared without regard to case; nil when absent.
    package func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }

    /// The token of an `Authorization: Bearer <token>` header (RFC 6750 section 2.1); nil when
    /// absent or another scheme.
    package var bearerToken: String? {
        guard let value = header("Authorization") else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingWhiteSpace
        return token.isEmpty ? nil : token
    }
}

/// An admission's answer.
package enum EdgeAdmissionDecision: Sendable, Equatable {
    /// Produce the job for `account`, carrying `entitlement` (the job's `entitlement`; "" for none).
    case admit(account: StoreIdentifier, entitlement: String)
    /// Answer now with `status` (401, 403, 400, 503...), a plain-text `reason` and `headers` (e.g.
    /// `WWW-Authenticate`); nothing is produced.
    case refuse(status: Int, reason: String, headers: [LicenseHTTPHeader])
}

/// The admission of an edge without Redis (tokens are then checked by the workers only): the account is the `X-Account`
/// header (a valid identifier, else the request is refused 400), or `anonymous` without one; the
/// `Authorization: Bearer` token passes to the job as its `entitlement`, which the worker checks
/// against the tenant's token secrets when the tenant's policy asks for one.
package struct HeaderAccountAdmission: EdgeAdmission {
    package static let accountHeader = "X-Account"
    package static let anonymous: StoreIdentifier = {
        // A valid literal: 9 ASCII letters.
        guard let id = try? StoreIdentifier("anonymous") else { preconditionFailure("invalid literal identifier") }
        return id
    }()

    package init() {}

    package func admit(_ request: EdgeAdmissionRequest) async -> EdgeAdmissionDecision {
        var account = Self.anonymous
        if let text = request.header(Self.accountHeader) {
            guard let identifier = try? StoreIdentifier(text) else {
                return .refuse(
                    status: 400, reason: "\(Self.accountHeader) must be 1 to 128 bytes without white space, control characters, ':', '{' or '}'",
                    headers: [])
            }
            account = identifier
        }
        let token = request.bearerToken ?? ""
        guard token.utf8.count <= LicenseJob.maximumEntitlementLength else {
            return .refuse(status: 400, reason: "the bearer token is longer than \(LicenseJob.maximumEntitlementLength) bytes", headers: [])
        }
        return .admit(account: account, entitlement: token)
    }
}
