import FairPlay
import Licensing
import Wire

/// A player's license request as `ksm edge` receives it over HTTP: the SPC, in which of the five
/// request shapes it came (the answer goes back in the same one), and what the shape carried besides.
///
/// Pure and synchronous: ``parse(body:contentType:query:)`` reads the body, the answer methods write
/// the player's answer for a worker's ``LicenseReply``, a timeout or an unavailable back end. The
/// shape is detected from the body's bytes, never from `Content-Type` alone: Apple's Safari sample
/// posts JSON as `application/x-www-form-urlencoded`, a player build posts the form as `text/html`,
/// Axinom's sample posts a raw SPC with no type at all (docs/edge.md, "Request shapes").
package struct LicenseHTTPRequest: Sendable, Hashable {
    /// How the player sent the SPC, and so how it reads the answer.
    package enum Shape: String, Sendable, Hashable, CaseIterable {
        /// The SPC's bytes are the body (Apple's app samples post `contentKeyRequestData`; EZDRM,
        /// Axinom, Conax). Answered with the CKC's bytes, `application/octet-stream`.
        case raw
        /// The body is the SPC in base64. Answered with the CKC in base64, `text/plain`.
        case base64
        /// `spc=<base64>[&assetId=…]`, as Apple's older Safari sample and Shaka Player send it.
        /// Answered with the CKC in base64, or in `<ckc>` tags when asked (``wantsCKCTags``).
        case form
        /// `{"spc": …, "asset-id"?: …, "priority"?: …}`. Answered with `{"ckc": …}` and the lease and
        /// rotation advice, `application/json`.
        case json
        /// Apple's `fps_safari_support.js`: `{"fairplay-streaming-request": {"streaming-keys": [{"id",
        /// "uri"?, "spc"}]}}`. Answered with `{"fairplay-streaming-response": {"streaming-keys": [{"id",
        /// "ckc"}]}}`.
        case apple
    }

    /// The shape the request came in; the answer goes back in the same one.
    package var shape: Shape
    /// The SPC's bytes, decoded. From ``parse(body:contentType:query:)``: at least 8 bytes, version 1,
    /// 2 or 3, at most `SPCContainer.maximumSize`; nothing else is checked here (the worker parses it).
    package var spc: [UInt8]
    /// The asset ID the player named beside the SPC: the form's `assetId`, the JSON's `asset-id` (or
    /// `assetId`), Apple's `uri`. Nil when it named none. Only informative: the SPC's own asset ID
    /// TLLV decides which key is issued.
    package var assetID: String?
    /// The JSON shape's `priority`; nil when absent (the service may take one from a header).
    package var priority: LicenseJob.Priority?
    /// True when the form shape's answer is `<ckc>BASE64</ckc>`: the query says `ckc-format=tags`.
    /// Always false for the other shapes (their answers have one form each).
    package var wantsCKCTags: Bool
    /// The Apple shape's streaming key `id` exactly as sent (an integer, a number or a string),
    /// echoed in the answer; nil for other shapes, or when the key had no `id`.
    package var streamingKeyID: JSONValue?

    /// A request as given (tests and callers that build one); ``parse(body:contentType:query:)`` checks what this does not.
    package init(
        shape: Shape, spc: [UInt8], assetID: String? = nil, priority: LicenseJob.Priority? = nil, wantsCKCTags: Bool = false,
        streamingKeyID: JSONValue? = nil
    ) {
        self.shape = shape
        self.spc = spc
        self.assetID = assetID
        self.priority = priority
        self.wantsCKCTags = wantsCKCTags
        self.streamingKeyID = streamingKeyID
    }

    /// The largest body read by default: 256 KiB, the largest job the workers accept
    /// (``LicenseJob/maximumEncodedSize``), which holds a 64 KiB SPC (`SPCContainer.maximumSize`) as
    /// base64 (87,384 characters) in any shape with room to spare.
    package static let maximumBodySize = LicenseJob.maximumEncodedSize
    /// The longest asset ID, streaming key `id` or `uri` accepted, in UTF-8 bytes: they are logged
    /// and echoed, never needed long (an `skd://` URI is tens of bytes).
    package static let maximumFieldLength = 1024
    /// The query parameter that asks for the form answer in `<ckc>` tags: `ckc-format=tags`
    /// (`ckc-format=base64`, the default, asks for bare base64). A query parameter rather than
    /// `Accept`, because the license URL is the one thing every player lets an integrator set.
    package static let ckcFormatParameter = "ckc-format"

    /// Reads a player's request body, with ``maximumBodySize`` as the limit.
    ///
    /// - Parameters:
    ///   - contentType: the request's `Content-Type`, if any. It never decides the shape (players
    ///     send wrong ones); it is named in the 415 message to help whoever reads it.
    ///   - query: the request's query parameters; only ``ckcFormatParameter`` is read.
    /// - Throws: ``LicenseHTTPRequestError``: 413 for a body or SPC over the limit, 415 for bytes
    ///   that match no shape, 400 for a recognised shape with a bad value. The order the shapes are
    ///   tried in is on ``parse(body:contentType:query:maximumBodySize:)``.
    package static func parse(body: [UInt8], contentType: String?, query: [String: String]) throws(LicenseHTTPRequestError) -> LicenseHTTPRequest {
        try parse(body: body, contentType: contentType, query: query, maximumBodySize: maximumBodySize)
    }

    /// Reads a player's request body as ``parse(body:contentType:query:)`` does, with the service's
    /// own body limit (checked before anything else is read).
    ///
    /// The shape, in this order, from the bytes:
    /// 1. first byte 0: **raw** (text never starts with NUL; an SPC starts with its big-endian
    ///    version, `00 00 00 01|02|03`);
    /// 2. after a UTF-8 byte order mark and white space, `{`: JSON; **apple** when it has a
    ///    `fairplay-streaming-request` member, **json** when it has `spc`, else 400;
    /// 3. printable ASCII starting `spc=` or `spc%3D` (the whole form percent-encoded once), or with a
    ///    `&`, or with an `=` that is not trailing base64 padding: **form**;
    /// 4. only base64 characters (either alphabet, `=`, line breaks): **base64**;
    /// 5. anything else: 415.
    /// Whatever the shape, the decoded SPC must be at least 8 bytes with version 1, 2 or 3 (else 400
    /// with `spcVersionErr`) and at most `SPCContainer.maximumSize` (else 413).
    package static func parse(
        body: [UInt8], contentType: String?, query: [String: String], maximumBodySize: Int
    ) throws(LicenseHTTPRequestError) -> LicenseHTTPRequest {
        guard body.count <= maximumBodySize else { throw .bodyTooLarge(body.count, limit: maximumBodySize) }
        let wantsTags: Bool
        switch query[ckcFormatParameter] {
        case nil, "base64": wantsTags = false
        case "tags": wantsTags = true
        default: throw .bad(nil, "query parameter \(ckcFormatParameter) must be \"tags\" or \"base64\"")
        }
        guard let first = body.first else { throw .bad(nil, "empty body: expected an SPC, raw or in base64, in a form or in JSON") }

        if first == 0 { return LicenseHTTPRequest(shape: .raw, spc: try checkedSPC(body, shape: .raw)) }
        let text = trimmed(body[...])
        guard let start = text.first else { throw .bad(nil, "body holds only white space: expected an SPC") }
        if start == UInt8(ascii: "{") { return try parseJSON(text) }
        if let form = try formBody(text, in: body) {
            var request = try parseForm(form)
            request.wantsCKCTags = wantsTags
            return request
        }
        if text.allSatisfy(isBase64Text) {
            return LicenseHTTPRequest(shape: .base64, spc: try decodeSPC(text, what: "base64 body", shape: .base64))
        }
        let declared = contentType.map { "; the bytes decide, not the Content-Type (\(printable($0, limit: 100)))" } ?? ""
        throw LicenseHTTPRequestError(
            status: 415,
            "body matches no request shape (a raw SPC, base64, a form with spc=, JSON with spc or fairplay-streaming-request)\(declared)")
    }
}
