/// One header of a ``LicenseHTTPAnswer``: a struct rather than a tuple, so answers compare and hash.
package struct LicenseHTTPHeader: Sendable, Hashable, CustomStringConvertible {
    /// The field name as sent, e.g. `Retry-After`.
    package var name: String
    /// The field value, e.g. `2`; never a secret (answers carry no key material in headers).
    package var value: String

    /// A header to send as given.
    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// `Name: value`, as on the wire.
    package var description: String { "\(name): \(value)" }
}

/// What the edge sends a player: the HTTP status, the body's media type, extra headers and the body.
///
/// Built by ``LicenseHTTPRequest`` (an answer to a worker's reply, a timeout, an unavailable back end)
/// and ``LicenseHTTPRequestError/answer()``; the HTTP server writes it as it is. `Content-Type` is in
/// ``contentType``, never in ``headers``; every answer carries `Cache-Control: no-store` (a license is
/// for one device and one request, never for a cache).
package struct LicenseHTTPAnswer: Sendable, Hashable {
    /// The HTTP status code: 200, or the refusal's 4xx or 5xx.
    package var status: Int
    /// The `Content-Type` value, e.g. `application/octet-stream` or `application/json`.
    package var contentType: String
    /// Headers besides `Content-Type` and `Content-Length`, in the order to send them.
    package var headers: [LicenseHTTPHeader]
    /// The bytes to send: the CKC (raw), its base64 (text shapes), a JSON document or one line of text.
    package var body: [UInt8]

    /// An answer to send as given.
    package init(status: Int, contentType: String, headers: [LicenseHTTPHeader] = [], body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    /// The first header named `name` (compared case-insensitively, as HTTP field names are), or nil.
    package func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// The `Retry-After` value, in whole seconds, when the answer has one.
    package var retryAfterSeconds: Int? { header("Retry-After").flatMap { Int($0) } }
}

extension LicenseHTTPAnswer {
    /// Raw CKC bytes (shape raw).
    static let binaryType = "application/octet-stream"
    /// Base64 text, bare or in `<ckc>` tags: ASCII by construction.
    static let base64Type = "text/plain; charset=us-ascii"
    /// A refusal as one line of text: the reason may carry any UTF-8 (an asset ID, a tenant name).
    static let textType = "text/plain; charset=utf-8"
    static let jsonType = "application/json"

    static let noStore = LicenseHTTPHeader(name: "Cache-Control", value: "no-store")

    /// The `Retry-After` header for `seconds`, at least 1 (RFC 9110 section 10.2.3: delay-seconds; 0 would
    /// invite an immediate retry storm).
    static func retryAfter(seconds: Int) -> LicenseHTTPHeader {
        LicenseHTTPHeader(name: "Retry-After", value: String(max(1, seconds)))
    }

    /// Whole seconds for a worker's `retry-after-ms`: rounded up, at least 1; 1 when the reply has none.
    static func retryAfterSeconds(milliseconds: Int64?) -> Int {
        guard let milliseconds, milliseconds > 0 else { return 1 }
        // Written without `+ 999` so Int64.max cannot overflow.
        let seconds = milliseconds / 1000 + (milliseconds % 1000 == 0 ? 0 : 1)
        return Int(clamping: max(1, seconds))
    }
}
