import FairPlay
import Licensing
import Logging
import Wire

/// Checks a packager's `Authorization` header against the tenant's stored credential hashes.
///
/// The presented token is hashed (SHA-256, ``PackagerToken``) and compared with every stored hash
/// with `CRYPTO_memcmp`, all of them, whatever matched first: how long a refusal takes tells nothing
/// about how close a guess was, or which credential it came near. The store is read on every call,
/// so a revoked credential is refused at once (packagers ask a few times a minute, not per viewer).
/// Neither the header nor the token is ever logged; refusals log the tenant and the reason.
package struct PackagerCredentialVerifier: Sendable {
    /// The outcome of one check.
    package enum Verdict: Sendable, Hashable {
        /// A stored credential matched; its ID is safe to log.
        case accepted(credentialID: StoreIdentifier)
        /// No credential matched (answer 401).
        case refused(Refusal)
        /// The store could not be read (answer 503; the packager retries).
        case unavailable(LicenseStoreError)
    }

    /// Why a request was refused; safe to log.
    package enum Refusal: String, Sendable, Hashable {
        /// No `Authorization` header.
        case missing = "no Authorization header"
        /// Neither `Bearer` nor a well-formed `Basic` value.
        case malformed = "the Authorization header is not a Bearer or Basic credential"
        /// The tenant has no packager credential.
        case noCredentials = "the tenant has no packager credential"
        /// No stored credential matches.
        case noMatch = "no packager credential of the tenant matches"
    }

    /// The tenants' credential hashes.
    package var store: any PackagerCredentialStore
    /// Refusals at debug, store failures at warning; never the credential.
    package var logger: Logger

    package init(store: any PackagerCredentialStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Reads the tenant's credentials and checks `authorization` (the header's value, nil when absent).
    package func verify(authorization: String?, tenant: StoreIdentifier) async -> Verdict {
        let verdict: Verdict
        if authorization == nil {
            verdict = .refused(.missing)
        } else {
            do {
                let credentials = try await store.packagerCredentials(tenant: tenant)
                verdict = Self.check(authorization: authorization, against: credentials)
            } catch {
                logger.warning(
                    "packager credentials could not be read",
                    metadata: [LoggingKeys.tenant: "\(tenant)", LoggingKeys.reason: "\(error.message)", LoggingKeys.retriable: "\(error.isRetriable)"])
                return .unavailable(error)
            }
        }
        switch verdict {
        case .accepted(let id):
            logger.trace("packager credential accepted", metadata: [LoggingKeys.tenant: "\(tenant)", "ksm.credential_id": "\(id)"])
        case .refused(let refusal):
            logger.debug("packager credential refused", metadata: [LoggingKeys.tenant: "\(tenant)", LoggingKeys.reason: "\(refusal.rawValue)"])
        case .unavailable:
            break
        }
        return verdict
    }

    /// The pure check: parse, hash, compare in constant time with every credential.
    package static func check(authorization: String?, against credentials: [PackagerCredential]) -> Verdict {
        guard let authorization else { return .refused(.missing) }
        guard let presented = PackagerAuthorization(headerValue: authorization) else { return .refused(.malformed) }
        guard !credentials.isEmpty else { return .refused(.noCredentials) }
        var hash = PackagerToken.hash(presented.token)
        defer { FairPlayCrypto.cleanse(&hash) }
        var matched: StoreIdentifier? = nil
        // Every hash is compared, with no early exit; the user name (not a secret) only picks
        // among matches.
        for credential in credentials {
            let equal = FairPlayCrypto.constantTimeEqual(hash, credential.tokenHash)
            if equal, presented.user.map({ ByteKey.equal($0, credential.id.value) }) ?? true { matched = credential.id }
        }
        return matched.map { .accepted(credentialID: $0) } ?? .refused(.noMatch)
    }
}
