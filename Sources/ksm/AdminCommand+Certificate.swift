import ArgumentParser
import FairPlay
import Foundation
import Licensing
import RedisStore
import Wire

/// `ksm admin put-certificate`: stores a tenant's FairPlay application certificate, which
/// `ksm edge` serves at `GET /fps/{tenant}/certificate` (docs/edge.md, "The certificate endpoint";
/// docs/redis.md for the key). The bytes are checked before they are written: an X.509 certificate
/// with an RSA key, and, when the tenant record lists certificate hashes, one of them, so players
/// are never handed a certificate the workers refuse SPCs for.
extension AdminCommand {
    struct PutCertificate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "put-certificate",
            abstract:
                "Store a tenant's application certificate (DER or PEM) for ksm edge to serve at GET /fps/{tenant}/certificate; it becomes the default one."
        )
        @OptionGroup var connection: Connection
        @Option(help: "Tenant ID.") var tenant: String
        @Option(help: "The certificate file: DER, or PEM (-----BEGIN CERTIFICATE-----).") var certificate: String

        func run() async throws {
            let tenantID = try AdminCommand.identifier(tenant, "tenant")
            guard let data = FileManager.default.contents(atPath: certificate), data.count <= 1 << 20 else {
                throw ValidationError("--certificate \(certificate) cannot be read (or is over 1 MiB)")
            }
            guard let der = Self.der(Array(data)) else {
                throw ValidationError("--certificate \(certificate) holds a PEM block that is not base64")
            }
            let summary = try await Self.store(der, tenant: tenantID, in: try connection.store())
            print("tenant \(tenant): certificate \(summary) stored; ksm edge serves it at GET /fps/\(tenant)/certificate")
        }

        /// PEM (`BEGIN CERTIFICATE`, the first block) or DER, as DER; nil for a PEM block that does
        /// not decode.
        static func der(_ bytes: [UInt8]) -> [UInt8]? {
            let text = String(decoding: bytes, as: UTF8.self)
            guard let begin = text.range(of: "-----BEGIN CERTIFICATE-----") else { return bytes }
            guard let end = text.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<text.endIndex),
                let der = Base64.decode(String(text[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace })), !der.isEmpty
            else { return nil }
            return der
        }

        /// Checks `der` against the tenant's record and stores it; returns how it names the
        /// certificate (hashes and key size).
        static func store(_ der: [UInt8], tenant: StoreIdentifier, in store: RedisLicenseStore) async throws -> String {
            let key: RSAPublicKey
            do { key = try RSAPublicKey(certificateDER: der) } catch {
                throw ValidationError("the certificate is not a DER X.509 certificate with an RSA key: \(error)")
            }
            let sha1 = FairPlayCrypto.sha1(der)
            let sha256 = FairPlayCrypto.sha256(der)
            guard let anonymous = try? StoreIdentifier("anonymous"),
                let record = try await store.fetch([StoreRequest(tenant: tenant, account: anonymous, assetID: [])]).first?.tenant
            else {
                throw ValidationError("no tenant \(tenant): create it first with ksm admin put-tenant")
            }
            // The worker accepts an SPC whose certificate hash (SHA-1, or SHA-256 in version 3) or
            // whose certificate's SHA-256 the record lists.
            if !record.certificateHashes.isEmpty, !record.certificateHashes.contains(sha1), !record.certificateHashes.contains(sha256) {
                throw ValidationError(
                    "tenant \(tenant) does not own certificate \(HexEncoding.encode(sha1)) (SHA-1): its record lists other hashes; add it with put-tenant --certificate-hash first"
                )
            }
            try await store.putApplicationCertificate(der, sha256: sha256, tenant: tenant)
            return "SHA-1 \(HexEncoding.encode(sha1)), SHA-256 \(HexEncoding.encode(sha256)), RSA \(key.bits) bits"
        }
    }
}
