import FairPlay
import Licensing
import Wire

/// What an operator gives to create or replace a tenant (`ksm admin put-tenant`, the Kubernetes
/// provisioning Job), turned into the ``TenantRecord`` workers read.
///
/// Secrets (entitlement token secrets, the content key seed) are read from files with the
/// ``SecretFile`` rules and stored only wrapped under the tenant's own key-encryption key, so the
/// KEK file must be given whenever a secret is; their plaintext is cleansed once wrapped.
package struct TenantProvisioning: Sendable {
    package var tenant: String
    /// Credentials files (as `ksm serve --credentials`) whose certificates the tenant owns.
    package var credentialsFiles: [String] = []
    /// Certificate hashes (20 bytes of hex each) the tenant owns besides those files' certificates.
    package var certificateHashes: [String] = []
    /// The ID of the KEK the tenant's content keys are wrapped under.
    package var keyEncryptionKeyID: String
    /// The KEK itself as `ID=PATH`; needed only to wrap ``tokenSecrets`` and ``keySeedFile``.
    package var keyEncryptionKeyFile: String?
    package var maxConcurrentStreams = 2
    package var leaseDurationSeconds: UInt32 = 600
    /// Entitlement token secrets as `KID=PATH` (hex or raw, at least 32 bytes).
    package var tokenSecrets: [String] = []
    /// A content key seed file (32 bytes, hex or raw): assets with no stored key get derived keys.
    package var keySeedFile: String?

    /// Token secret lengths accepted: HMAC-SHA256 keys of 32 bytes or more, in whole 64-bit words.
    static let tokenSecretLengths = Set(stride(from: EntitlementKeyring.minimumSecretLength, through: 1024, by: 8))

    package init(tenant: String, keyEncryptionKeyID: String) {
        self.tenant = tenant
        self.keyEncryptionKeyID = keyEncryptionKeyID
    }

    /// Reads the files and builds the record.
    /// - Throws: ``TenantProvisioningError`` naming the input at fault: an identifier out of range, a
    ///   hash that is not 20 bytes of hex, an unreadable credentials or secret file, a secret without
    ///   `keyEncryptionKeyFile` or with a KEK file of another ID, a token secret under 32 bytes.
    package func record() throws(TenantProvisioningError) -> TenantRecord {
        func identifier(_ value: String, _ what: String) throws(TenantProvisioningError) -> StoreIdentifier {
            do { return try StoreIdentifier(value) } catch { throw TenantProvisioningError("\(what): \(error)") }
        }
        let id = try identifier(tenant, "tenant")
        let kekID = try identifier(keyEncryptionKeyID, "KEK id")
        var hashes: [[UInt8]] = []
        for text in certificateHashes {
            guard let hash = HexEncoding.decode(text), hash.count == 20 else {
                throw TenantProvisioningError("certificate hash \(text) is not 20 bytes of hex")
            }
            hashes.append(hash)
        }
        for path in credentialsFiles {
            do throws(CredentialsFile.LoadError) {
                hashes += try CredentialsFile.load(path: path).map(\.certificateHash)
            } catch {
                throw TenantProvisioningError("\(error)")
            }
        }
        /// Runs a key-file step, its error told in the operator's terms.
        func keyFile<T>(_ step: () throws(KeyFile.Error) -> T) throws(TenantProvisioningError) -> T {
            do throws(KeyFile.Error) { return try step() } catch { throw TenantProvisioningError(error.description) }
        }
        guard keySeedFile == nil && tokenSecrets.isEmpty || keyEncryptionKeyFile != nil else {
            let what = keySeedFile != nil ? "a key seed" : "a token secret"
            throw TenantProvisioningError("\(what) needs the tenant's KEK as \(keyEncryptionKeyID)=PATH to wrap it")
        }
        var wrappedSeed: [UInt8]?
        if let keySeedFile, let keyEncryptionKeyFile {
            wrappedSeed = try keyFile { () throws(KeyFile.Error) in try KeyFile.wrapKeySeed(path: keySeedFile, kek: keyEncryptionKeyFile, kekID: kekID) }
        }
        var secrets: [StoreIdentifier: [UInt8]] = [:]
        if !tokenSecrets.isEmpty, let keyEncryptionKeyFile {
            let keyring = try keyFile { () throws(KeyFile.Error) in try KeyFile.keyring(idAndPath: keyEncryptionKeyFile, expectedID: keyEncryptionKeyID).keyring
            }
            for pair in tokenSecrets {
                let (kid, path) = try keyFile { () throws(KeyFile.Error) in try KeyFile.idAndValue(pair, option: "--token-secret") }
                var secret = try keyFile { () throws(KeyFile.Error) in
                    try KeyFile.read(
                        path, lengths: Self.tokenSecretLengths,
                        wrongLength: "token secret \(kid) is not \(EntitlementKeyring.minimumSecretLength) to 1024 bytes, a multiple of 8")
                }
                defer { FairPlayCrypto.cleanse(&secret) }
                let keyID = try identifier(kid, "token key ID")
                do { secrets[keyID] = try keyring.wrap(secret: secret, with: kekID) } catch { throw TenantProvisioningError("token secret \(kid): \(error)") }
            }
        }
        return TenantRecord(
            id: id, certificateHashes: hashes, keyEncryptionKeyID: kekID, maxConcurrentStreams: maxConcurrentStreams,
            leaseDurationSeconds: leaseDurationSeconds, entitlementSecrets: secrets, keySeed: wrappedSeed)
    }
}
