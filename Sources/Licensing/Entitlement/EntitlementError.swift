/// Why an entitlement token was refused. Each case has its own ``PolicyRefusal`` (rule and status),
/// so a platform can tell a clock problem from a forged token from a token for another title.
/// Descriptions name the claim at fault and never quote the token, its signature or a secret.
package enum EntitlementError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Not three base64url parts, bad base64url, not JSON, a claim missing or of the wrong type.
    case malformed(String)
    /// `alg` is not HS256 (`none` included): only HMAC-SHA256 is accepted.
    case unsupportedAlgorithm(String)
    /// The header's `kid` names no secret in the tenant's keyring (or there is no `kid`).
    case unknownKeyID
    /// The HMAC-SHA256 does not match.
    case badSignature
    /// `exp` has passed.
    case expired
    /// `nbf` is still ahead.
    case notYetValid
    /// `sub` is not the job's account.
    case wrongAccount
    /// Neither `asset` nor `asset_pattern` matches the SPC's asset.
    case wrongAsset
    /// `tenant` is present and is not the job's tenant.
    case wrongTenant
    /// The policy requires a token and the job carries none.
    case missing

    /// The rule and status this failure is answered with.
    package var refusal: PolicyRefusal {
        switch self {
        case .malformed: .tokenMalformed
        case .unsupportedAlgorithm: .tokenUnsupportedAlgorithm
        case .unknownKeyID: .tokenUnknownKeyID
        case .badSignature: .tokenBadSignature
        case .expired: .tokenExpired
        case .notYetValid: .tokenNotYetValid
        case .wrongAccount: .tokenWrongAccount
        case .wrongAsset: .tokenWrongAsset
        case .wrongTenant: .tokenWrongTenant
        case .missing: .tokenMissing
        }
    }

    package var description: String {
        switch self {
        case .malformed(let why): "entitlement token is malformed: \(why)"
        case .unsupportedAlgorithm(let alg): "entitlement token algorithm \(alg) is not HS256"
        case .unknownKeyID: "entitlement token names a key ID the tenant does not hold"
        case .badSignature: "entitlement token signature does not verify"
        case .expired: "entitlement token has expired"
        case .notYetValid: "entitlement token is not valid yet"
        case .wrongAccount: "entitlement token is for another account"
        case .wrongAsset: "entitlement token does not cover this asset"
        case .wrongTenant: "entitlement token is for another tenant"
        case .missing: "an entitlement token is required and none was presented"
        }
    }
}
