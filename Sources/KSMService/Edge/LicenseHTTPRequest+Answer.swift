import FairPlay
import Licensing
import Wire

extension LicenseHTTPRequest {
    /// The player's answer for a worker's reply, in the request's shape.
    ///
    /// - Status 0 with a CKC: 200 with the CKC: raw bytes (`application/octet-stream`); base64 text
    ///   (`text/plain; charset=us-ascii`, for the form in `<ckc>` tags when asked); `{"ckc",
    ///   "lease-expires-at"?, "next-key"?}` or Apple's `{"fairplay-streaming-response":
    ///   {"streaming-keys": [{"ckc", "id"}]}}` (`application/json`).
    /// - A refusal: the HTTP status of ``httpStatus(for:)`` with the reply's code and reason.
    ///   `overloaded`, `storeUnavailable`, `rateLimited` and `deadlineExpired` are 503 with
    ///   `Retry-After`: the reply's `retry-after-ms` in whole seconds, rounded up, at least 1.
    ///   The body: for the JSON shapes `{"error": {"reason", "status", "status-name"}}` (Apple's shape
    ///   adds `"fairplay-streaming-response": {"streaming-keys": [{"id", "status"}]}`, the per-key
    ///   status of Apple's own servers); for the others `text/plain` `status <code>: <reason>`.
    /// - Status 0 without a CKC (never sent for a license job): 502, as the worker's fault.
    ///
    /// Only `reply`'s CKC, lease, rotation advice, status and reason are read: the answer carries
    /// nothing of any other reply, and matching the reply to this request (the correlation ID) is
    /// the caller's. The reason never holds key, SPC or CKC bytes (``LicenseReply/reason``).
    package func answer(to reply: LicenseReply) -> LicenseHTTPAnswer {
        guard reply.status == .ok else {
            let status = Self.httpStatus(for: reply.status)
            let headers =
                status == 503 ? [LicenseHTTPAnswer.retryAfter(seconds: LicenseHTTPAnswer.retryAfterSeconds(milliseconds: reply.retryAfterMilliseconds))] : []
            return Self.refusal(status: status, code: reply.status, reason: reply.reason, shape: shape, streamingKeyID: streamingKeyID, headers: headers)
        }
        guard let ckc = reply.ckc, !ckc.isEmpty else {
            return Self.refusal(
                status: 502, code: KSMStatus(.internalError), reason: "the key server's answer carries no CKC", shape: shape, streamingKeyID: streamingKeyID,
                headers: [])
        }
        switch shape {
        case .raw:
            return LicenseHTTPAnswer(status: 200, contentType: LicenseHTTPAnswer.binaryType, headers: [LicenseHTTPAnswer.noStore], body: ckc)
        case .base64, .form:
            var body: [UInt8] = []
            body.reserveCapacity(ckc.count / 3 * 4 + 15)
            let tags = shape == .form && wantsCKCTags
            if tags { body += "<ckc>".utf8 }
            Base64.append(ckc, to: &body)
            if tags { body += "</ckc>".utf8 }
            return LicenseHTTPAnswer(status: 200, contentType: LicenseHTTPAnswer.base64Type, headers: [LicenseHTTPAnswer.noStore], body: body)
        case .json:
            var w = JSONWriter(reservingCapacity: ckc.count / 3 * 4 + 96)
            w.beginObject()
            w.key("ckc")
            w.write(base64: ckc)
            if let lease = reply.leaseExpiresAt {
                w.key("lease-expires-at")
                w.write(integer: lease)
            }
            if let next = reply.nextKey {
                w.key("next-key")
                w.beginObject()
                w.key("boundary")
                w.write(integer: next.boundaryMilliseconds)
                w.key("fetch-at")
                w.write(integer: next.fetchAtMilliseconds)
                w.endObject()
            }
            w.endObject()
            return LicenseHTTPAnswer(status: 200, contentType: LicenseHTTPAnswer.jsonType, headers: [LicenseHTTPAnswer.noStore], body: w.bytes)
        case .apple:
            var w = JSONWriter(reservingCapacity: ckc.count / 3 * 4 + 96)
            w.beginObject()
            w.key("fairplay-streaming-response")
            w.beginObject()
            w.key("streaming-keys")
            w.beginArray()
            w.beginObject()
            w.key("ckc")
            w.write(base64: ckc)
            if let streamingKeyID {
                w.key("id")
                w.write(streamingKeyID)
            }
            w.endObject()
            w.endArray()
            w.endObject()
            w.endObject()
            return LicenseHTTPAnswer(status: 200, contentType: LicenseHTTPAnswer.jsonType, headers: [LicenseHTTPAnswer.noStore], body: w.bytes)
        }
    }

    /// 504 with `Retry-After` (at least 1 s): the edge's deadline passed with no reply (RFC 9110
    /// section 15.6.5: a gateway that did not hear from upstream in time). The code is
    /// `deadlineExpired`, as a worker would have answered a job taken up too late.
    package func timeoutAnswer(retryAfterSeconds: Int) -> LicenseHTTPAnswer {
        Self.refusal(
            status: 504, code: .deadlineExpired, reason: "no answer from the key servers before the deadline", shape: shape,
            streamingKeyID: streamingKeyID, headers: [LicenseHTTPAnswer.retryAfter(seconds: retryAfterSeconds)])
    }

    /// 503 with `Retry-After` (at least 1 s): the edge holds as many requests as it may, or cannot
    /// put the job on Kafka. The code is `overloaded`, as a worker shedding load answers; `reason`
    /// is the service's, for people.
    package func unavailableAnswer(reason: String, retryAfterSeconds: Int) -> LicenseHTTPAnswer {
        Self.refusal(
            status: 503, code: .overloaded, reason: reason, shape: shape, streamingKeyID: streamingKeyID,
            headers: [LicenseHTTPAnswer.retryAfter(seconds: retryAfterSeconds)])
    }

    /// The HTTP status a worker's reply status is answered with.
    ///
    /// - 200: `noErr`.
    /// - 503: `overloaded`, `storeUnavailable`, `rateLimited`, `deadlineExpired`: the same request may
    ///   succeed later (a deadline that passed in the queue is the server's load, not the player's
    ///   fault), and 503 with `Retry-After` is what HTTP clients and proxies know to back off on.
    /// - 400: Apple's codes for an SPC that does not parse or negotiate (`spcVersionErr`, `parserErr`,
    ///   `missingRequiredTagErr`, `paramErr`, `memoryErr`, `integrityErr`, `versionErr`, `dupTagErr`),
    ///   `invalidCertificateErr` (the SPC was made for a certificate this server does not hold: the
    ///   player fetched the wrong one) and `invalidJob`: the request is wrong and sending it again
    ///   changes nothing.
    /// - 403: policy, lease, device, rental, token and replay refusals (`clientSecurityLevelErr`,
    ///   `certificateNotOwnedByTenant`, `tooManyStreams`, `tokenExpired`, `replayedSPC`, every
    ///   `PolicyRefusal` code): the server understood the request and will not license it.
    /// - 404: `unknownTenant`, `noContentKey`: what the request names does not exist here.
    /// - 409: `jobIdReused`: the request ID was answered before for another request.
    /// - 501: `notImplementedErr`: the deployment lacks what the SPC needs.
    /// - 500: the rest (`internalErr`, `keyUnwrapFailed`, `noPolicy`, `invalidPolicy`,
    ///   `replyTopicRefused`, codes this version does not know): the server's configuration or
    ///   fault, not the player's.
    package static func httpStatus(for status: KSMStatus) -> Int {
        switch status {
        case .ok: 200
        case .overloaded, .storeUnavailable, .rateLimited, .deadlineExpired: 503
        case KSMStatus(.spcVersionError), KSMStatus(.parserError), KSMStatus(.missingRequiredTag), KSMStatus(.parameterError),
            KSMStatus(.memoryError), KSMStatus(.integrityError), KSMStatus(.versionError), KSMStatus(.duplicateTag),
            KSMStatus(.invalidCertificate), .invalidJob:
            400
        case KSMStatus(.clientSecurityLevel), .certificateNotOwnedByTenant, .replayedSPC, .offlineNeedsCapability: 403
        case .unknownTenant, .noContentKey: 404
        case .jobIdReused: 409
        case KSMStatus(.notImplemented): 501
        default:
            // Every policy engine refusal (leases, tokens, rentals, devices, outputs) is a 403, the
            // ones added later included.
            PolicyRefusal.allCases.contains { $0.status == status.rawValue } ? 403 : 500
        }
    }

    /// A refusal in `shape`'s error form (text when the shape is unknown), with `Cache-Control: no-store`
    /// and `headers`.
    static func refusal(
        status: Int, code: KSMStatus, reason: String, shape: Shape?, streamingKeyID: JSONValue?, headers: [LicenseHTTPHeader]
    ) -> LicenseHTTPAnswer {
        // One line, of bounded length, whatever the worker or the service wrote.
        let reason = printable(reason, limit: 1024)
        switch shape {
        case .json?, .apple?:
            var w = JSONWriter(reservingCapacity: 128 + reason.utf8.count)
            w.beginObject()
            w.key("error")
            w.beginObject()
            w.key("reason")
            w.write(string: reason)
            w.key("status")
            w.write(integer: Int64(code.rawValue))
            w.key("status-name")
            w.write(string: code.name)
            w.endObject()
            if shape == .apple {
                w.key("fairplay-streaming-response")
                w.beginObject()
                w.key("streaming-keys")
                w.beginArray()
                w.beginObject()
                if let streamingKeyID {
                    w.key("id")
                    w.write(streamingKeyID)
                }
                w.key("status")
                w.write(integer: Int64(code.rawValue))
                w.endObject()
                w.endArray()
                w.endObject()
            }
            w.endObject()
            return LicenseHTTPAnswer(status: status, contentType: LicenseHTTPAnswer.jsonType, headers: [LicenseHTTPAnswer.noStore] + headers, body: w.bytes)
        case .raw?, .base64?, .form?, nil:
            return LicenseHTTPAnswer(
                status: status, contentType: LicenseHTTPAnswer.textType, headers: [LicenseHTTPAnswer.noStore] + headers,
                body: Array("status \(code.rawValue): \(reason)".utf8))
        }
    }
}
