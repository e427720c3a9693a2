import Licensing
import Testing
import Wire

@Suite("Entitlement tokens")
struct EntitlementTokenTests {
    static let secret: [UInt8] = Array("0123456789abcdef0123456789abcdef".utf8)
    static let oldSecret: [UInt8] = Array("fedcba9876543210fedcba9876543210".utf8)
    static let now: Int64 = 1_767_000_000_000
    static let job = EntitlementToken.Expectation(account: "acct-1", asset: "match-42/main", tenant: "tv1")

    func ring() throws -> EntitlementKeyring { try EntitlementKeyring(["k2": Self.secret, "k1": Self.oldSecret]) }

    static func claims(
        sub: String = "acct-1", asset: String? = "match-42/main", pattern: String? = nil, exp: Int64 = now / 1000 + 600, nbf: Int64? = nil,
        tenant: String? = nil
    ) -> EntitlementClaims {
        EntitlementClaims(subject: sub, asset: asset, assetPattern: pattern, expiresAt: exp, notBefore: nbf, tenant: tenant)
    }

    func verify(_ token: String, job: EntitlementToken.Expectation = EntitlementTokenTests.job) throws -> EntitlementToken {
        try EntitlementToken.verify(token, keyring: try ring(), expecting: job, nowMilliseconds: Self.now)
    }

    @Test("a good token verifies with the current key and with the rotated-out key")
    func verifies() throws {
        let t = try verify(EntitlementToken.sign(Self.claims(), keyID: "k2", secret: Self.secret))
        #expect(t.keyID == "k2" && t.claims.subject == "acct-1")
        #expect(try verify(EntitlementToken.sign(Self.claims(), keyID: "k1", secret: Self.oldSecret)).keyID == "k1")
    }

    @Test(
        "an asset pattern covers assets with its prefix only",
        arguments: [
            ("match-42/*", true), ("match-4*", true), ("*", true), ("match-43/*", false), ("match-42/main/*", false),
        ])
    func patterns(pattern: String, covers: Bool) throws {
        let token = EntitlementToken.sign(Self.claims(asset: nil, pattern: pattern), keyID: "k2", secret: Self.secret)
        if covers {
            _ = try verify(token)
        } else {
            #expect(throws: EntitlementError.wrongAsset) { try verify(token) }
        }
    }

    @Test("the policy claim is read as the top layer")
    func policyClaim() throws {
        var c = Self.claims()
        c.policy = PolicyDocument(lease: .init(durationSeconds: 30))
        let t = try verify(EntitlementToken.sign(c, keyID: "k2", secret: Self.secret))
        let p = try PolicyLayers(tenant: PolicyDocument(contentType: .hd, lease: .init(durationSeconds: 600)), entitlement: t.claims.policy).resolve()
        #expect(p.leaseDurationSeconds == 30)
        #expect(p.origins["lease.duration"] == .entitlement)
    }

    static func forged(header: JSONValue, claims: JSONValue = claims().jsonValue) -> String {
        EntitlementToken.sign(claimsJSON: claims, header: header, secret: secret)
    }

    @Test(
        "each failure has its own error, rule and status",
        arguments: [
            ("three parts", "abc.def", EntitlementError.malformed("not three dot-separated parts")),
            ("bad base64url", "a*b.c.d", .malformed("header is not base64url")),
            (
                "padded base64url",
                forged(header: .object(["alg": .string("HS256"), "kid": .string("k2")])).replacingOccurrences(of: ".", with: "=.", options: [], range: nil),
                .malformed("header is not base64url")
            ),
            ("alg none", forged(header: .object(["alg": .string("none"), "kid": .string("k2")])), .unsupportedAlgorithm("none")),
            ("alg HS512", forged(header: .object(["alg": .string("HS512"), "kid": .string("k2")])), .unsupportedAlgorithm("HS512")),
            ("alg RS256", forged(header: .object(["alg": .string("RS256"), "kid": .string("k2")])), .unsupportedAlgorithm("RS256")),
            ("no kid", forged(header: .object(["alg": .string("HS256")])), .unknownKeyID),
            ("unknown kid", forged(header: .object(["alg": .string("HS256"), "kid": .string("k9")])), .unknownKeyID),
            ("signed with another secret", EntitlementToken.sign(claims(), keyID: "k2", secret: oldSecret), .badSignature),
            ("expired", EntitlementToken.sign(claims(exp: now / 1000), keyID: "k2", secret: secret), .expired),
            ("not yet valid", EntitlementToken.sign(claims(nbf: now / 1000 + 1), keyID: "k2", secret: secret), .notYetValid),
            ("wrong account", EntitlementToken.sign(claims(sub: "acct-2"), keyID: "k2", secret: secret), .wrongAccount),
            ("wrong asset", EntitlementToken.sign(claims(asset: "match-43/main"), keyID: "k2", secret: secret), .wrongAsset),
            ("wrong tenant", EntitlementToken.sign(claims(tenant: "tv2"), keyID: "k2", secret: secret), .wrongTenant),
            (
                "no exp",
                forged(header: .object(["alg": .string("HS256"), "kid": .string("k2")]), claims: .object(["sub": .string("acct-1"), "asset": .string("a")])),
                .malformed("claim exp is missing")
            ),
            (
                "asset and pattern",
                forged(
                    header: .object(["alg": .string("HS256"), "kid": .string("k2")]),
                    claims: .object(["sub": .string("acct-1"), "asset": .string("a"), "asset_pattern": .string("a*"), "exp": .integer(now / 1000 + 60)])),
                .malformed("claims asset and asset_pattern are both present")
            ),
            (
                "bad policy claim",
                forged(
                    header: .object(["alg": .string("HS256"), "kid": .string("k2")]),
                    claims: .object([
                        "sub": .string("acct-1"), "asset": .string("match-42/main"), "exp": .integer(now / 1000 + 60),
                        "policy": .object(["hdcp": .string("type9")]),
                    ])), .malformed("claim policy: invalid policy: \"hdcp\" must be one of none, type0 or type1")
            ),
        ])
    func failures(name: String, token: String, expected: EntitlementError) {
        #expect(throws: expected) { try verify(token) }
        #expect(!expected.description.contains(String(decoding: Self.secret, as: UTF8.self)))
    }

    @Test("a flipped bit anywhere in the signed parts or the signature breaks the token")
    func tamper() throws {
        let token = EntitlementToken.sign(Self.claims(), keyID: "k2", secret: Self.secret)
        var bytes = Array(token.utf8)
        let dot = try #require(bytes.lastIndex(of: UInt8(ascii: ".")))
        for i in [dot + 1, bytes.count - 2] {
            var t = bytes
            t[i] = t[i] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            #expect(throws: EntitlementError.self) { try verify(String(decoding: t, as: UTF8.self)) }
        }
        // Change the account inside the claims: the signature no longer matches.
        let parts = token.split(separator: ".")
        let other = EntitlementToken.sign(Self.claims(sub: "acct-2"), keyID: "k2", secret: Self.secret).split(separator: ".")
        #expect(throws: EntitlementError.badSignature) { try verify("\(parts[0]).\(other[1]).\(parts[2])") }
        bytes.append(UInt8(ascii: "A"))
        #expect(throws: EntitlementError.self) { try verify(String(decoding: bytes, as: UTF8.self)) }
    }

    @Test("a token has one spelling: the signature's unused trailing bits set, or padding added, is refused")
    func oneSpelling() throws {
        let token = EntitlementToken.sign(Self.claims(), keyID: "k2", secret: Self.secret)
        _ = try verify(token)
        // A 32-byte MAC is 43 symbols; the last carries 4 bits of the MAC and 2 unused bits.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var bytes = Array(token.utf8)
        let last = try #require(alphabet.firstIndex(of: bytes[bytes.count - 1]))
        bytes[bytes.count - 1] = alphabet[last | 1]
        #expect(last & 3 == 0)
        #expect(throws: EntitlementError.self) { try verify(String(decoding: bytes, as: UTF8.self)) }
        #expect(throws: EntitlementError.self) { try verify(token + "=") }
        #expect(throws: EntitlementError.self) { try verify(token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "x") }
    }

    @Test("each token failure maps to its own refusal in the engine")
    func engineMapsTokenFailures() throws {
        let p = try policy(#"{"content-type": "hd"}"#)
        let errors: [EntitlementError] = [
            .malformed("x"), .unsupportedAlgorithm("none"), .unknownKeyID, .badSignature, .expired, .notYetValid, .wrongAccount, .wrongAsset, .wrongTenant,
        ]
        var rules = Set<String>()
        for e in errors {
            let d = evaluate(p, client(), entitlement: .rejected(e))
            #expect(d.refusal == e.refusal)
            rules.insert(d.rule)
        }
        #expect(rules.count == errors.count)
    }

    @Test("a keyring refuses short secrets and lists key IDs only")
    func keyringRules() throws {
        #expect(throws: EntitlementKeyring.InvalidKey.self) { try EntitlementKeyring(["k": Array(repeating: 1, count: 31)]) }
        #expect(try ring().description == "EntitlementKeyring(k1, k2)")
    }
}
