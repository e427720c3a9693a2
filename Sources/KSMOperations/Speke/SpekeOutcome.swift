/// How a SPEKE request ended, the `outcome` label of `ksm_speke_requests_total`: a closed, small
/// set, so the label stays low-cardinality.
package enum SpekeOutcome: String, Sendable, Hashable, CaseIterable {
    /// 200 with keys.
    case ok
    /// 404 or 400: the route names no valid tenant.
    case badRoute = "bad_route"
    /// 401: no credential, or one that matches none of the tenant's.
    case unauthorized
    /// 403: the tenant has no packager credential (never issued, or all revoked).
    case forbidden
    /// 413: the body is over `--max-request-bytes`.
    case tooLarge = "too_large"
    /// 422 (or another 4xx): the SPEKE or CPIX rules refused the document, or its keys.
    case rejected
    /// 404 after authentication: the tenant has credentials but no tenant record.
    case unknownTenant = "unknown_tenant"
    /// 503: Redis could not be reached; the packager retries.
    case unavailable
    /// 500: a fault of this service or its deployment (a KEK it does not hold).
    case error
}
