import Wire

/// The claims of an entitlement token: who may play what until when, and optional policy overrides.
///
/// JSON names: `sub` (account), `asset` (exact asset ID) or `asset_pattern` (a prefix ending in `*`),
/// `exp` and `nbf` (seconds since 1970, JWT NumericDate), `policy` (a ``PolicyDocument`` layer),
/// `tenant`. Exactly one of `asset` and `asset_pattern`.
package struct EntitlementClaims: Hashable, Sendable {
    package var subject: String
    /// Exact asset ID; nil when ``assetPattern`` is used.
    package var asset: String?
    /// A prefix ending in `*` (`"match-42/*"`); `"*"` alone covers every asset of the tenant.
    package var assetPattern: String?
    /// Expiry, seconds since 1970.
    package var expiresAt: Int64
    /// Not valid before, seconds since 1970.
    package var notBefore: Int64?
    /// Overrides on top of the tenant, asset and key period layers.
    package var policy: PolicyDocument?
    /// When present, the token is only valid for this tenant.
    package var tenant: String?

    package init(
        subject: String, asset: String? = nil, assetPattern: String? = nil, expiresAt: Int64, notBefore: Int64? = nil, policy: PolicyDocument? = nil,
        tenant: String? = nil
    ) {
        self.subject = subject
        self.asset = asset
        self.assetPattern = assetPattern
        self.expiresAt = expiresAt
        self.notBefore = notBefore
        self.policy = policy
        self.tenant = tenant
    }

    /// True when the claims cover the asset ID `assetID`, the bytes the SPC carries: `asset`'s UTF-8
    /// bytes equal to them, or the pattern's bytes before its `*` starting them.
    ///
    /// Bytes, not Unicode text, as the store keys assets: the NFC and NFD spellings of one name are
    /// two assets, and a token for one does not cover the other. A prefix is a byte prefix, so
    /// `"a/e*"` covers `"a/e"` followed by U+0301 as it covers `"a/ex"`.
    package func covers(assetID: some Collection<UInt8>) -> Bool {
        if let asset { return asset.utf8.elementsEqual(assetID) }
        if let assetPattern, assetPattern.utf8.last == UInt8(ascii: "*") {
            return ByteKey.hasPrefix(assetID, assetPattern.utf8.dropLast())
        }
        return false
    }

    /// ``covers(assetID:)`` for an asset ID given as text: its UTF-8 bytes.
    package func covers(asset assetID: String) -> Bool {
        covers(assetID: assetID.utf8)
    }

    /// Reads the claims from the token's payload JSON.
    package init(value: JSONValue) throws(EntitlementError) {
        guard case .object(let o) = value else { throw .malformed("claims are not a JSON object") }
        // A claim given as `null` is malformed, not absent: a signed token says what it means.
        func string(_ key: String) throws(EntitlementError) -> String? {
            guard let v = o[key] else { return nil }
            guard case .string(let s) = v, !s.isEmpty else { throw .malformed("claim \(key) is not a non-empty string") }
            return s
        }
        func time(_ key: String) throws(EntitlementError) -> Int64? {
            guard let v = o[key] else { return nil }
            guard case .integer(let n) = v, n >= 0, n <= 253_402_300_799 else { throw .malformed("claim \(key) is not an integer NumericDate") }
            return n
        }
        guard let sub = try string("sub") else { throw .malformed("claim sub is missing") }
        guard let exp = try time("exp") else { throw .malformed("claim exp is missing") }
        let asset = try string("asset")
        let pattern = try string("asset_pattern")
        switch (asset, pattern) {
        case (nil, nil): throw .malformed("neither claim asset nor asset_pattern is present")
        case (.some, .some): throw .malformed("claims asset and asset_pattern are both present")
        case (nil, let p?):
            guard p.hasSuffix("*"), p.firstIndex(of: "*") == p.index(before: p.endIndex) else {
                throw .malformed("claim asset_pattern must end with its only *")
            }
        case (.some, nil): break
        }
        var policy: PolicyDocument?
        if let v = o["policy"] {
            do throws(PolicyDocumentError) { policy = try PolicyDocument(value: v) } catch { throw .malformed("claim policy: \(error.description)") }
        }
        self.init(subject: sub, asset: asset, assetPattern: pattern, expiresAt: exp, notBefore: try time("nbf"), policy: policy, tenant: try string("tenant"))
    }

    /// The claims as JSON (for signing in tests and admin tools).
    package var jsonValue: JSONValue {
        var o: [String: JSONValue] = ["sub": .string(subject), "exp": .integer(expiresAt)]
        if let asset { o["asset"] = .string(asset) }
        if let assetPattern { o["asset_pattern"] = .string(assetPattern) }
        if let notBefore { o["nbf"] = .integer(notBefore) }
        if let policy { o["policy"] = policy.jsonValue }
        if let tenant { o["tenant"] = .string(tenant) }
        return .object(o)
    }
}
