import Licensing
import Wire

/// A tenant's FairPlay application certificates as stored: each certificate's DER under its SHA-256,
/// and which one was stored last. Hashes come from the caller (this module computes none).
package struct StoredApplicationCertificates: Sendable, Hashable {
    package struct Entry: Sendable, Hashable {
        package var sha256: [UInt8]
        package var der: [UInt8]

        package init(sha256: [UInt8], der: [UInt8]) {
            self.sha256 = sha256
            self.der = der
        }
    }

    /// In SHA-256 order.
    package var entries: [Entry]
    /// The SHA-256 of the certificate stored last; nil when none is stored.
    package var latestSHA256: [UInt8]?

    package init(entries: [Entry], latestSHA256: [UInt8]?) {
        self.entries = entries
        self.latestSHA256 = latestSHA256
    }
}

/// Application certificates: one hash per tenant (``RedisKeys/certificates(_:)``), in the tenant's
/// hash slot; field = the certificate's SHA-256 (hex), value = its DER; field `latest` = the
/// SHA-256 (hex) of the one stored last. A field name of hex digits cannot be `latest`.
extension RedisLicenseStore {
    /// Stores one certificate's DER under its SHA-256 and makes it the latest, in one transaction.
    /// The caller checks that the bytes are an X.509 certificate of the tenant and hashes them
    /// (`ksm admin put-certificate`).
    package func putApplicationCertificate(_ der: [UInt8], sha256: [UInt8], tenant: StoreIdentifier) async throws(LicenseStoreError) {
        let hash = HexEncoding.encode(sha256)
        let key = RedisKeys.certificates(tenant)
        let replies = try await run([
            RedisCommand(["MULTI"]),
            RedisCommand(["HSET", key, RedisArgument(hash), RedisArgument(der), RedisArgument(RedisKeys.latestCertificateField), RedisArgument(hash)]),
            RedisCommand(["EXEC"]),
        ])
        for reply in replies { _ = try Self.checked(reply) }
    }

    /// Every certificate of the tenant; no entries when it has none (or is unknown).
    package func applicationCertificates(tenant: StoreIdentifier) async throws(LicenseStoreError) -> StoredApplicationCertificates {
        let reply = try await run([RedisCommand(["HGETALL", RedisKeys.certificates(tenant)])])[0]
        guard let fields = try Self.decodeHash(reply) else { return StoredApplicationCertificates(entries: [], latestSHA256: nil) }
        var latest: [UInt8]?
        var entries: [StoredApplicationCertificates.Entry] = []
        for (name, value) in fields {
            guard let text = String(validating: name.bytes, as: UTF8.self) else {
                throw LicenseStoreError(.corruptRecord, "certificates of \(tenant) have a field that is not text")
            }
            if text == RedisKeys.latestCertificateField {
                latest = String(validating: value, as: UTF8.self).flatMap { HexEncoding.decode($0) }
                continue
            }
            guard let hash = HexEncoding.decode(text), hash.count == 32 else {
                throw LicenseStoreError(.corruptRecord, "certificates of \(tenant) have a field that is no SHA-256")
            }
            entries.append(.init(sha256: hash, der: value))
        }
        entries.sort { $0.sha256.lexicographicallyPrecedes($1.sha256) }
        return StoredApplicationCertificates(entries: entries, latestSHA256: latest)
    }
}

extension RedisKeys {
    /// HASH: the tenant's application certificates (``RedisLicenseStore/applicationCertificates(tenant:)``).
    static func certificates(_ tenant: StoreIdentifier) -> RedisArgument {
        RedisArgument("fps:{t:\(tenant.value)}:certs")
    }

    /// The field of ``certificates(_:)`` naming the certificate stored last.
    static let latestCertificateField = "latest"
}
