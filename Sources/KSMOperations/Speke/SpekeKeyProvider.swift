import FairPlay
import KSMService
import Licensing
import Logging
import Speke

/// One SPEKE v2 request from route to answer: tenant, credential, size, CPIX, keys, CPIX answer.
///
/// Order of checks: the route's tenant, then the credential (so nothing of an unauthenticated body
/// is parsed), then the size, then the SPEKE version header and the document (``SpekeRequest``),
/// then the keys (``PackagerKeyIssuer``), then the answer (``SpekeResponseWriter``). Every failure
/// becomes a status and a plain-text reason; nothing here traps on any input. Logs name the tenant,
/// the outcome and the reason; never the `Authorization` header, a token or a key byte.
package struct SpekeKeyProvider: Sendable {
    /// The request body as the server read it, capped (``BoundedRequestBody``).
    package typealias Body = BoundedRequestBody

    package var verifier: PackagerCredentialVerifier
    package var issuer: PackagerKeyIssuer
    /// The reader's limits; ``XMLReadLimits/maximumBytes`` is `--max-request-bytes`.
    package var limits: XMLReadLimits
    /// `X-Speke-User-Agent`.
    package var userAgent: String
    package var logger: Logger

    /// The challenge of a 401 (RFC 6750 section 3; Basic is accepted too, RFC 7617).
    package static let challenge = "Bearer realm=\"ksm-speke\""

    package init(verifier: PackagerCredentialVerifier, issuer: PackagerKeyIssuer, limits: XMLReadLimits, userAgent: String, logger: Logger) {
        self.verifier = verifier
        self.issuer = issuer
        self.limits = limits
        self.userAgent = userAgent
        self.logger = logger
    }

    /// The answer to `POST /speke/v2/{tenant}/copyProtection`.
    /// - Parameters:
    ///   - tenant: the route's `{tenant}` segment, as written.
    ///   - authorization: the `Authorization` header; nil when absent.
    ///   - spekeVersion: the `X-Speke-Version` header; nil when absent.
    ///   - readBody: reads the body, called only once the credential is accepted.
    package func answer(tenant text: String, authorization: String?, spekeVersion: String?, readBody: () async -> Body) async -> SpekeHTTPResponse {
        let tenant: StoreIdentifier
        do {
            tenant = try StoreIdentifier(text)
        } catch {
            return .text(404, "No such tenant: the route's tenant is not a valid tenant ID (\(error.message)).", outcome: .badRoute)
        }

        switch await verifier.verify(authorization: authorization, tenant: tenant) {
        case .accepted:
            break
        case .refused(.noCredentials):
            return .text(403, "Forbidden: tenant \(tenant) has no packager credential (none was issued, or every one was revoked).", outcome: .forbidden)
        case .refused(.noMatch):
            return .text(
                401, "Unauthorized: the credential matches none of tenant \(tenant)'s packager credentials.", outcome: .unauthorized,
                headers: [SpekeHTTPHeader("WWW-Authenticate", Self.challenge + ", error=\"invalid_token\"")])
        case .refused(let refusal):
            return .text(
                401, "Unauthorized: \(refusal.rawValue); send Authorization: Bearer <token> (ksm admin put-packager-credential).",
                outcome: .unauthorized, headers: [SpekeHTTPHeader("WWW-Authenticate", Self.challenge)])
        case .unavailable(let error):
            return .text(
                503, "Key provider unavailable: packager credentials cannot be read (\(error.message)); retry.", outcome: .unavailable,
                headers: [SpekeHTTPHeader("Retry-After", "1")])
        }

        guard case .bytes(let bytes) = await readBody() else {
            return .text(413, "CPIX document too large: the body is more than \(limits.maximumBytes) bytes.", outcome: .tooLarge)
        }
        let request: SpekeRequest
        do throws(SpekeError) {
            request = try SpekeRequest(body: bytes, spekeVersionHeader: spekeVersion, limits: limits)
        } catch {
            logger.debug("SPEKE request refused", metadata: [LoggingKeys.tenant: "\(tenant)", LoggingKeys.reason: "\(error.code)"])
            return .refusal(error)
        }
        return await issue(request, tenant: tenant)
    }

    /// Issues the request's keys and writes the answer.
    func issue(_ request: SpekeRequest, tenant: StoreIdentifier) async -> SpekeHTTPResponse {
        let keyRequests: [PackagerKeyRequest]
        do throws(SpekeError) {
            keyRequests = try SpekeKeyRequests.requests(for: request, tenant: tenant)
        } catch {
            return .refusal(error)
        }
        var issued: [IssuedPackagerKey]
        do throws(PackagerKeyIssuerError) {
            issued = try await issuer.issue(keyRequests)
        } catch {
            return Self.issuingFailure(error, tenant: tenant, logger: logger)
        }
        defer { for index in issued.indices { issued[index].cleanse() } }
        var keys: [KID: IssuedKey] = [:]
        do throws(SpekeError) {
            for key in issued {
                guard let kid = KID(bytes: key.request.keyID) else { throw .keyIssuing("an issued key has a key ID that is not 16 bytes") }
                keys[kid] = try IssuedKey(key: key.contentKey, iv: key.iv, skdURI: key.uri)
            }
            let response = try SpekeResponseWriter.response(for: request, keys: keys, userAgent: userAgent)
            logger.info(
                "SPEKE keys issued",
                metadata: [LoggingKeys.tenant: "\(tenant)", "ksm.keys": "\(issued.count)", "ksm.speke_version": "\(response.spekeVersion)"])
            return SpekeHTTPResponse(
                status: 200, headers: response.headerFields.map { SpekeHTTPHeader($0.name, $0.value) }, body: response.body, outcome: .ok,
                keysIssued: issued.count)
        } catch {
            logger.error("SPEKE answer not written", metadata: [LoggingKeys.tenant: "\(tenant)", LoggingKeys.reason: "\(error.message)"])
            return .refusal(error)
        }
    }

    /// The status for an issuing failure: the request's fault 422, an unknown tenant 404, Redis
    /// down 503 (the packager retries), the deployment's fault (a KEK not held) 500.
    static func issuingFailure(_ error: PackagerKeyIssuerError, tenant: StoreIdentifier, logger: Logger) -> SpekeHTTPResponse {
        let metadata: Logger.Metadata = [LoggingKeys.tenant: "\(tenant)", LoggingKeys.reason: "\(error.message)", "ksm.code": "\(error.code)"]
        switch error.code {
        case .invalidRequest:
            return .text(422, "Invalid key request: \(error.message)", outcome: .rejected)
        case .unknownTenant:
            logger.warning("SPEKE request for a tenant with credentials but no tenant record", metadata: metadata)
            return .text(404, "Unknown tenant: \(error.message); provision it with ksm admin put-tenant.", outcome: .unknownTenant)
        case .store where error.isRetriable:
            logger.warning("SPEKE keys not issued: the store is unavailable", metadata: metadata)
            return .text(
                503, "Key provider unavailable: \(error.message); retry.", outcome: .unavailable, headers: [SpekeHTTPHeader("Retry-After", "1")])
        case .keyring:
            logger.error("SPEKE keys not issued: this key provider cannot use the tenant's key-encryption key", metadata: metadata)
            return .text(500, "Key provider error: \(error.message)", outcome: .error)
        default:
            logger.error("SPEKE keys not issued", metadata: metadata)
            return .text(500, "Key provider error: \(error.message)", outcome: .error)
        }
    }
}
