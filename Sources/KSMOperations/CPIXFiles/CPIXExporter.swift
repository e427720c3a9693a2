import KSMService
import Licensing
import Logging
import Speke

/// Issues the keys of an export and writes them as a CPIX document: ``CPIXExportRequest`` makes
/// the SPEKE request, and ``SpekeKeyProvider`` answers it exactly as `ksm speke` answers a
/// packager (``PackagerKeyIssuer`` for the keys, ``SpekeResponseWriter`` for the document), without
/// the HTTP route and its credential check. The workers then serve exactly the exported keys, and a
/// later SPEKE request for the same (content, period, KID) gets the same ones.
package struct CPIXExporter: Sendable {
    /// The SPEKE answering path; its credential check is never used, the route being the only caller of it.
    package var provider: SpekeKeyProvider

    /// - Parameters:
    ///   - store: the Redis store `ksm speke` uses (keys, policies, period logs, schedules).
    ///   - keyring: the tenants' key-encryption keys.
    ///   - logger: warnings only; the command's own output says what was exported. Never a key byte.
    ///   - clock: the wall clock in ms since 1970, against which rotation boundaries are compared.
    package init(
        store: any PackagerKeyStore & PackagerCredentialStore, keyring: KeyEncryptionKeyring, logger: Logger,
        clock: @escaping @Sendable () -> Int64 = { LicenseProcessor.currentTimeMilliseconds() }
    ) {
        // The provider's own logs speak of HTTP requests and statuses; the export reports its
        // failures itself, so only the issuer's warnings (a period not recorded) are kept.
        var quiet = logger
        quiet.logLevel = .critical
        provider = SpekeKeyProvider(
            verifier: PackagerCredentialVerifier(store: store, logger: quiet),
            issuer: PackagerKeyIssuer(store: store, keyring: keyring, logger: logger, clock: clock), limits: XMLReadLimits(),
            userAgent: SpekeResponseWriter.defaultUserAgent, logger: quiet)
    }

    /// What an export wrote: the document and how many keys it holds.
    package struct Export: Sendable {
        /// The CPIX document, UTF-8; holds the keys, in the clear unless ``isEncrypted``.
        package var document: [UInt8]
        /// The URIs and KIDs of the keys, in document order (for the operator; no key bytes).
        package var keys: [(uri: String, keyID: KID)]
        /// True when the keys are encrypted for a recipient certificate.
        package var isEncrypted: Bool
    }

    /// Issues every key of `request` and answers the document.
    /// - Throws: `.invalidArgument` for a request SPEKE would refuse (422), `.unknownTenant`,
    ///   `.keyring` (a KEK not given), `.store` (Redis failed).
    package func export(_ request: CPIXExportRequest) async throws(CPIXFileError) -> Export {
        let speke = try request.spekeRequest()
        let answer = await provider.issue(speke, tenant: request.tenant)
        guard answer.status == 200 else {
            let message = String(decoding: answer.body, as: UTF8.self)
            let code: CPIXFileError.Code =
                switch answer.status {
                case 404: .unknownTenant
                case 422: .invalidArgument
                case 503: .store
                default: .keyring
                }
            throw CPIXFileError(code, message)
        }
        // The URIs as the issuer named the keys.
        let keys: [(uri: String, keyID: KID)]
        do throws(SpekeError) {
            keys = zip(speke.contentKeys, try SpekeKeyRequests.requests(for: speke, tenant: request.tenant)).map { ($1.uri, $0.kid) }
        } catch {
            throw CPIXFileError(.invalidArgument, error.message)
        }
        return Export(document: answer.body, keys: keys, isEncrypted: !speke.deliveryRecipients.isEmpty)
    }
}
