import KSMService

/// The edge's view of the player-facing codec: what the route needs to read a body and write an
/// answer, in one place, so the route does not care how a shape is read.
///
/// Raw SPC only for now (the body is the SPC's bytes, answered with the CKC's bytes); the request
/// shapes codec (`LicenseHTTPRequest` in KSMService) takes this place once it lands.
package enum EdgeRequestCodec {
    /// A body read as a license request.
    package struct Parsed: Sendable {
        /// The `shape` label: `raw`.
        package var shape: String
        package var spc: [UInt8]
        /// The priority the body named; nil when it named none.
        package var priority: LicenseJob.Priority?

        /// The player's answer to a worker's reply.
        package func answer(to reply: LicenseReply) -> EdgeAnswer {
            if reply.status == .ok, let ckc = reply.ckc {
                return EdgeAnswer(status: 200, contentType: "application/octet-stream", headers: [EdgeHeader("Cache-Control", "no-store")], body: ckc)
            }
            if reply.isRetriable {
                let seconds = max(1, Int(((reply.retryAfterMilliseconds ?? 1_000) + 999) / 1_000))
                return .text(503, "\(reply.status.rawValue) \(reply.reason)", headers: [EdgeHeader("Retry-After", "\(seconds)")])
            }
            return .text(403, "\(reply.status.rawValue) \(reply.reason)")
        }

        /// 504: no reply before the deadline.
        package func timeout(retryAfterSeconds: Int) -> EdgeAnswer {
            .text(504, "no answer from the key server in time", headers: [EdgeHeader("Retry-After", "\(max(1, retryAfterSeconds))")])
        }

        /// 503: the request could not be queued or answered; ask again later.
        package func unavailable(_ reason: String, retryAfterSeconds: Int) -> EdgeAnswer {
            .text(503, reason, headers: [EdgeHeader("Retry-After", "\(max(1, retryAfterSeconds))")])
        }

        /// A refusal of the request before a job was made (a bad header).
        package func refusal(_ status: Int, _ reason: String) -> EdgeAnswer {
            .text(status, reason)
        }
    }

    /// A body that is no license request, and its answer.
    package struct Refusal: Error, Sendable {
        package var answer: EdgeAnswer
        /// The shape label, when one was recognised before the body failed.
        package var shape: String?
    }

    /// Reads a body (at most `limit` bytes) as a license request.
    package static func parse(body: [UInt8], contentType: String?, query: [String: String], limit: Int) -> Swift.Result<Parsed, Refusal> {
        guard body.count <= limit else { return .failure(Refusal(answer: tooLarge(limit: limit))) }
        // An SPC starts with its big-endian version: 00 00 00 01, 02 or 03.
        guard body.count >= 8, body[0] == 0, body[1] == 0, body[2] == 0, (1...3).contains(body[3]) else {
            return .failure(Refusal(answer: .text(415, "the body is not an SPC (raw bytes)")))
        }
        return .success(Parsed(shape: "raw", spc: body, priority: nil))
    }

    /// 413: the body is over `--max-request-bytes`.
    package static func tooLarge(limit: Int) -> EdgeAnswer {
        .text(413, "the body exceeds the \(limit)-byte limit")
    }
}
