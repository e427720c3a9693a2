import FairPlay

/// Why a player's HTTP body is not a license request the edge can put on Kafka, and the answer to
/// send back.
///
/// ``message`` names what was wrong (the shape, the field, the rule) and never quotes key bytes, SPC
/// bytes or a field's value: a player's body is untrusted and may be most of a megabyte.
package struct LicenseHTTPRequestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 400 (a recognised shape with a bad value: bad base64, no `spc`, not an SPC), 413 (the body or
    /// the SPC is over the limit) or 415 (the bytes match no shape).
    package var status: Int
    /// What was wrong, for people: the shape, the field, the rule; never a value from the body.
    package var message: String
    /// The status code the body carries, as a worker's refusal would: Apple's `spcVersionErr` (-42580)
    /// when the decoded bytes are not an SPC, `memoryErr` (-42586) for a body or SPC over the limit,
    /// `paramErr` (-42585) for everything else.
    package var code: KSMStatus
    /// The shape the body was recognised as before it failed, which decides the answer's form (JSON
    /// for ``LicenseHTTPRequest/Shape/json`` and ``LicenseHTTPRequest/Shape/apple``, text otherwise);
    /// nil when no shape matched or the body was refused unread.
    package var shape: LicenseHTTPRequest.Shape?

    /// An error with `status` and `message`; `code` defaults to `paramErr`, `shape` to none (a text answer).
    package init(status: Int, _ message: String, code: KSMStatus = KSMStatus(.parameterError), shape: LicenseHTTPRequest.Shape? = nil) {
        self.status = status
        self.message = message
        self.code = code
        self.shape = shape
    }

    /// `HTTP <status>: <message>`, for logs.
    package var description: String { "HTTP \(status): \(message)" }

    /// The player's answer: ``status`` with the code and message in the shape's error form (see
    /// ``LicenseHTTPRequest/answer(to:)``). A 415 adds `Accept` with the media types the edge reads
    /// (RFC 9110 section 12.5.1: in a response, the types preferred in a later request).
    package func answer() -> LicenseHTTPAnswer {
        var extra: [LicenseHTTPHeader] = []
        if status == 415 {
            extra.append(
                LicenseHTTPHeader(name: "Accept", value: "application/octet-stream, text/plain, application/x-www-form-urlencoded, application/json"))
        }
        return LicenseHTTPRequest.refusal(status: status, code: code, reason: message, shape: shape, streamingKeyID: nil, headers: extra)
    }

    // MARK: The errors the parser raises, each worded once

    static func bodyTooLarge(_ count: Int, limit: Int) -> LicenseHTTPRequestError {
        LicenseHTTPRequestError(status: 413, "body of \(count) bytes exceeds the \(limit)-byte limit", code: KSMStatus(.memoryError))
    }

    static func spcTooLarge(_ count: Int, shape: LicenseHTTPRequest.Shape) -> LicenseHTTPRequestError {
        LicenseHTTPRequestError(
            status: 413, "SPC of \(count) bytes exceeds the \(SPCContainer.maximumSize)-byte limit", code: KSMStatus(.memoryError), shape: shape)
    }

    static func bad(_ shape: LicenseHTTPRequest.Shape?, _ message: String) -> LicenseHTTPRequestError {
        LicenseHTTPRequestError(status: 400, message, shape: shape)
    }
}
