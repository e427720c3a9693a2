import FairPlay
import KSMService
import Licensing
import RedisStore
import Wire

/// `GET /fps/{tenant}/certificate`: the tenant's FairPlay application certificate, DER, which a
/// player fetches before it builds an SPC (the SPC names the certificate by its hash and wraps its
/// key with the certificate's public key).
///
/// Served as `application/pkix-cert`, the registered type of one DER certificate (RFC 2585 section
/// 4.1); `application/x-x509-ca-cert` would call it a CA certificate, which it is not, and players
/// read the body as bytes whatever the type. A tenant with several certificates (1024- and 2048-bit
/// keys) is served the one whose SHA-1 or SHA-256 `?hash=` names (hex), else the one stored last
/// (`ksm admin put-certificate`). Read through a cache of a few seconds, as tenants are.
package struct EdgeCertificateRoute: Sendable {
    /// What the cache holds per tenant.
    package enum Lookup: Sendable {
        case stored(StoredApplicationCertificates)
        /// The store could not be read; the error's text, for the log.
        case unavailable(String)

        var isFailure: Bool {
            if case .unavailable = self { return true }
            return false
        }
    }

    package static let contentType = "application/pkix-cert"
    /// How long players and caches may keep it: a minute, so a rotated certificate reaches them soon.
    package static let cacheControl = "public, max-age=60"
    package static let hashQuery = "hash"

    package let certificates: EdgeCachedLoader<StoreIdentifier, Lookup>?

    /// - Parameter certificates: nil when this edge reads no Redis; every request is answered 404.
    package init(certificates: EdgeCachedLoader<StoreIdentifier, Lookup>?) {
        self.certificates = certificates
    }

    /// Serves certificates held in memory, per tenant (the embedded demo, which runs no Redis); a
    /// tenant not given has none (404).
    package static func fixed(_ certificates: [StoreIdentifier: StoredApplicationCertificates]) -> EdgeCertificateRoute {
        EdgeCertificateRoute(
            certificates: EdgeCachedLoader(
                capacity: max(1, certificates.count), timeToLive: .seconds(3_600),
                load: { tenant in .stored(certificates[tenant] ?? StoredApplicationCertificates(entries: [], latestSHA256: nil)) }))
    }

    /// One DER certificate as a tenant's only stored one.
    package static func single(_ der: [UInt8]) -> StoredApplicationCertificates {
        let sha256 = FairPlayCrypto.sha256(der)
        return StoredApplicationCertificates(entries: [.init(sha256: sha256, der: der)], latestSHA256: sha256)
    }

    /// The cache over a Redis store, as ``EntitlementAdmission/tenantLoader(store:keyring:)``.
    package static func loader(store: RedisLicenseStore) -> EdgeCachedLoader<StoreIdentifier, Lookup> {
        EdgeCachedLoader(
            capacity: EntitlementAdmission.tenantCapacity, timeToLive: EntitlementAdmission.tenantTimeToLive, isFailure: { $0.isFailure },
            load: { tenant in
                do throws(LicenseStoreError) {
                    return .stored(try await store.applicationCertificates(tenant: tenant))
                } catch {
                    return .unavailable(error.description)
                }
            })
    }

    package func answer(tenant text: String, query: [String: String]) async -> LicenseHTTPAnswer {
        guard let tenant = try? StoreIdentifier(text) else {
            return .text(404, "no such tenant: the route is /fps/{tenant}/certificate")
        }
        guard let certificates else {
            return .text(404, "this edge reads no tenant store (--redis-url), so it serves no certificates")
        }
        return Self.answer(tenant: tenant, lookup: await certificates.value(for: tenant), hash: query[Self.hashQuery])
    }

    /// The answer for a tenant's stored certificates and the `hash` query parameter, if any.
    package static func answer(tenant: StoreIdentifier, lookup: Lookup, hash: String?) -> LicenseHTTPAnswer {
        let stored: StoredApplicationCertificates
        switch lookup {
        case .unavailable:
            return .text(503, "the tenant store cannot be read; try again", headers: [LicenseHTTPHeader(name: "Retry-After", value: "1")])
        case .stored(let certificates): stored = certificates
        }
        var wanted: [UInt8]?
        if let hash {
            guard let bytes = HexEncoding.decode(hash.trimmingWhiteSpace), bytes.count == 20 || bytes.count == 32 else {
                return .text(400, "hash must be a certificate's SHA-1 (40 hex digits) or SHA-256 (64 hex digits)")
            }
            wanted = bytes
        }
        guard !stored.entries.isEmpty else {
            return .text(404, "tenant \(tenant.value) has no application certificate stored (ksm admin put-certificate)")
        }
        guard let entry = select(stored, hash: wanted) else {
            return .text(404, "tenant \(tenant.value) has no application certificate with that hash")
        }
        return LicenseHTTPAnswer(
            status: 200, contentType: contentType,
            headers: [
                LicenseHTTPHeader(name: "Cache-Control", value: cacheControl),
                LicenseHTTPHeader(name: "ETag", value: "\"\(HexEncoding.encode(entry.sha256))\""),
            ],
            body: entry.der)
    }

    /// The certificate whose SHA-1 (what SPC versions 1 and 2 and `put-tenant --certificate-hash`
    /// carry) or SHA-256 (SPC version 3's) is `hash`; with no hash the one stored last (the last in
    /// hash order when the store names none); nil when none matches.
    package static func select(_ stored: StoredApplicationCertificates, hash: [UInt8]?) -> StoredApplicationCertificates.Entry? {
        guard let hash else {
            return stored.entries.first { $0.sha256 == stored.latestSHA256 } ?? stored.entries.last
        }
        if hash.count == 32 { return stored.entries.first { $0.sha256 == hash } }
        return stored.entries.first { FairPlayCrypto.sha1($0.der) == hash }
    }
}
