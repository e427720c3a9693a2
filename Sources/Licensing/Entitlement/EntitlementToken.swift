import Wire

/// A platform-signed entitlement token: a JWT in compact form (RFC 7519), HMAC-SHA256 only.
///
/// `base64url(header) "." base64url(claims) "." base64url(HMAC-SHA256(secret, first two parts))`,
/// unpadded. The header is `{"alg": "HS256", "kid": "<key id>"}` (`typ` optional). The tenant's
/// ``EntitlementKeyring`` picks the secret by `kid`. `alg: none` and every other algorithm are
/// refused before any key is looked at: the verifier decides the algorithm, never the token.
package struct EntitlementToken: Hashable, Sendable {
    /// The `kid` that verified.
    package var keyID: String
    package var claims: EntitlementClaims

    /// The longest token accepted, in bytes.
    package static let maximumLength = 8 * 1024

    /// Who the job says is asking, checked against the claims byte for byte (``EntitlementClaims/covers(assetID:)``):
    /// a token names its account, asset and tenant by the bytes the store keys them by.
    package struct Expectation: Hashable, Sendable {
        package var account: String
        /// The asset ID as the SPC carries it.
        package var assetID: [UInt8]
        package var tenant: String

        package init(account: String, assetID: [UInt8], tenant: String) {
            self.account = account
            self.assetID = assetID
            self.tenant = tenant
        }

        /// An asset ID given as text: its UTF-8 bytes.
        package init(account: String, asset: String, tenant: String) {
            self.init(account: account, assetID: Array(asset.utf8), tenant: tenant)
        }

        package static func == (lhs: Self, rhs: Self) -> Bool {
            ByteKey.equal(lhs.account, rhs.account) && lhs.assetID == rhs.assetID && ByteKey.equal(lhs.tenant, rhs.tenant)
        }

        package func hash(into hasher: inout Hasher) {
            ByteKey.hash(account, into: &hasher)
            ByteKey.hash(bytes: assetID, into: &hasher)
            ByteKey.hash(tenant, into: &hasher)
        }
    }

    /// Verifies a compact token and checks it against the job.
    ///
    /// Order: shape and header (malformed, algorithm, key ID), signature, claims (malformed), tenant,
    /// not-before, expiry, account, asset. The signature is checked before any claim is believed.
    /// - Parameters:
    ///   - nowMilliseconds: the clock, epoch ms; `exp` and `nbf` are in seconds.
    ///   - leewaySeconds: clock skew tolerated on `exp` and `nbf`. Default: 0.
    /// - Throws: one ``EntitlementError`` per failure, each with its own rule and status.
    package static func verify(
        _ token: some StringProtocol, keyring: EntitlementKeyring, expecting job: Expectation, nowMilliseconds: Int64, leewaySeconds: Int64 = 0
    ) throws(EntitlementError) -> EntitlementToken {
        let verified = try verify(token, keyring: keyring, tenant: job.tenant, nowMilliseconds: nowMilliseconds, leewaySeconds: leewaySeconds)
        guard ByteKey.equal(verified.claims.subject, job.account) else { throw .wrongAccount }
        guard verified.claims.covers(assetID: job.assetID) else { throw .wrongAsset }
        return verified
    }

    /// Every check of ``verify(_:keyring:expecting:nowMilliseconds:leewaySeconds:)`` that needs
    /// neither the account nor the asset, in the same order: shape and header, signature, claims,
    /// tenant, not-before, expiry. For a caller that learns the account from the token and has no
    /// SPC yet (the edge), so it refuses exactly what the worker would refuse before those two.
    package static func verify(
        _ token: some StringProtocol, keyring: EntitlementKeyring, tenant: String, nowMilliseconds: Int64, leewaySeconds: Int64 = 0
    ) throws(EntitlementError) -> EntitlementToken {
        let bytes = Array(token.utf8)
        guard bytes.count <= maximumLength else { throw .malformed("token of \(bytes.count) bytes is over \(maximumLength)") }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("not three dot-separated parts") }
        guard let headerBytes = Base64URL.decode(parts[0]) else { throw .malformed("header is not base64url") }
        guard case .object(let header)? = try? JSONValue(parsing: headerBytes) else { throw .malformed("header is not a JSON object") }
        guard case .string(let alg)? = header["alg"] else { throw .malformed("header has no alg") }
        guard alg == "HS256" else { throw .unsupportedAlgorithm(alg.count <= 16 ? alg : String(alg.prefix(16)) + "...") }
        // RFC 7515 4.1.11: extensions we do not understand must not be ignored.
        guard header["crit"] == nil else { throw .malformed("header has crit extensions") }
        guard case .string(let kid)? = header["kid"] else { throw .unknownKeyID }
        guard let secret = keyring.secret(for: kid) else { throw .unknownKeyID }
        guard let signature = Base64URL.decode(parts[2]) else { throw .malformed("signature is not base64url") }
        let signingInputLength = parts[0].count + 1 + parts[1].count
        let expected = HMACSHA256.mac(key: secret, message: bytes[0..<signingInputLength])
        guard HMACSHA256.equal(expected, signature) else { throw .badSignature }

        guard let claimBytes = Base64URL.decode(parts[1]) else { throw .malformed("claims are not base64url") }
        let claimValue: JSONValue
        do throws(JSONParser.Error) { claimValue = try JSONValue(parsing: claimBytes) } catch { throw .malformed("claims are not JSON") }
        let claims = try EntitlementClaims(value: claimValue)

        if let claimed = claims.tenant, !ByteKey.equal(claimed, tenant) { throw .wrongTenant }
        let now = nowMilliseconds / 1000
        if let nbf = claims.notBefore, now + leewaySeconds < nbf { throw .notYetValid }
        if now - leewaySeconds >= claims.expiresAt { throw .expired }
        return EntitlementToken(keyID: kid, claims: claims)
    }

    /// Signs claims into a compact token (tests, `ksm admin`, and platforms written in Swift).
    package static func sign(_ claims: EntitlementClaims, keyID: String, secret: [UInt8]) -> String {
        sign(claimsJSON: claims.jsonValue, header: .object(["alg": .string("HS256"), "typ": .string("JWT"), "kid": .string(keyID)]), secret: secret)
    }

    /// Signs any header and claims JSON with HMAC-SHA256, whatever the header says (tests use it
    /// to forge tokens with other algorithms).
    package static func sign(claimsJSON: JSONValue, header: JSONValue, secret: [UInt8]) -> String {
        let input = Base64URL.encode(header.encoded()) + "." + Base64URL.encode(claimsJSON.encoded())
        return input + "." + Base64URL.encode(HMACSHA256.mac(key: secret, message: Array(input.utf8)))
    }
}
