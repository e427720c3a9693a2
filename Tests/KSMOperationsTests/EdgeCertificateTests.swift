import FairPlay
import KSMOperations
import KSMService
import Licensing
import RedisStore
import Testing
import Wire

/// `GET /fps/{tenant}/certificate` as a pure answer: the certificate a hash names (SHA-1 or
/// SHA-256), else the one stored last, its type and caching headers, and each refusal.
@Suite struct EdgeCertificateTests {
    static let one = StoredApplicationCertificates.Entry(
        sha256: hex("b70bc67e1e7e73dfab529f17cb0a4dd91fccd70af5ed30271521aeaee0b2ec37"), der: Array("der-one".utf8))
    static let two = StoredApplicationCertificates.Entry(
        sha256: hex("b3032bf0c68b1cd6e0192f5ce30d4a4ecd153fa6c417225d68932bac9b130bc2"), der: Array("der-two".utf8))
    static let stored = StoredApplicationCertificates(entries: [two, one], latestSHA256: one.sha256)

    static func hex(_ text: String) -> [UInt8] { HexEncoding.decode(text) ?? [] }

    static func answer(_ lookup: EdgeCertificateRoute.Lookup, hash: String? = nil) throws -> LicenseHTTPAnswer {
        EdgeCertificateRoute.answer(tenant: try StoreIdentifier("acme"), lookup: lookup, hash: hash)
    }

    @Test func theLatestByDefaultAsPkixCertWithItsHashAsETag() throws {
        let answer = try Self.answer(.stored(Self.stored))
        #expect(answer.status == 200 && answer.body == Self.one.der)
        #expect(answer.contentType == "application/pkix-cert")
        #expect(answer.headers.contains(LicenseHTTPHeader(name: "Cache-Control", value: "public, max-age=60")))
        #expect(answer.headers.contains(LicenseHTTPHeader(name: "ETag", value: "\"\(HexEncoding.encode(Self.one.sha256))\"")))
        // No latest named: the last in hash order.
        #expect(try Self.answer(.stored(.init(entries: [Self.two, Self.one], latestSHA256: nil))).body == Self.one.der)
    }

    @Test func aHashNamesOneBySHA1OrSHA256() throws {
        #expect(try Self.answer(.stored(Self.stored), hash: "20be2bc8165b20dd176585b57507df1f583a99ef").body == Self.two.der)
        #expect(try Self.answer(.stored(Self.stored), hash: HexEncoding.encode(Self.two.sha256).uppercased()).body == Self.two.der)
        #expect(try Self.answer(.stored(Self.stored), hash: String(repeating: "0", count: 40)).status == 404)
        #expect(try Self.answer(.stored(Self.stored), hash: "xyz").status == 400)
        #expect(try Self.answer(.stored(Self.stored), hash: "abcd").status == 400)
    }

    @Test func certificatesHeldInMemoryAreServedPerTenant() async throws {
        let route = EdgeCertificateRoute.fixed([try StoreIdentifier("acme"): EdgeCertificateRoute.single(Self.one.der)])
        let served = await route.answer(tenant: "acme", query: [:])
        #expect(served.status == 200 && served.body == Self.one.der)
        #expect(served.headers.contains(LicenseHTTPHeader(name: "ETag", value: "\"\(HexEncoding.encode(FairPlayCrypto.sha256(Self.one.der)))\"")))
        #expect(await route.answer(tenant: "other", query: [:]).status == 404)
    }

    @Test func noneStoredIs404AndAnUnreachableStore503() async throws {
        let none = try Self.answer(.stored(.init(entries: [], latestSHA256: nil)))
        #expect(none.status == 404 && String(decoding: none.body, as: UTF8.self).contains("ksm admin put-certificate"))
        let down = try Self.answer(.unavailable("refused"))
        #expect(down.status == 503 && down.headers.contains(LicenseHTTPHeader(name: "Retry-After", value: "1")))
        #expect(await EdgeCertificateRoute(certificates: nil).answer(tenant: "acme", query: [:]).status == 404)
        #expect(await EdgeCertificateRoute(certificates: nil).answer(tenant: "a b", query: [:]).status == 404)
    }
}
