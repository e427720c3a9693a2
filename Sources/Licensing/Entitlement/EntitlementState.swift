/// What the job's entitlement token amounted to, as ``PolicyEngine`` sees it. Verification happens
/// before the policy is resolved, because a verified token's `policy` claim is a layer.
package enum EntitlementState: Hashable, Sendable {
    /// The job carried no token.
    case absent
    /// The token verified and binds this account and asset.
    case verified
    /// The token was presented and refused.
    case rejected(EntitlementError)
}
