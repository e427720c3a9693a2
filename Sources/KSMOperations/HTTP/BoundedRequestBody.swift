import Hummingbird
import NIOCore

/// A request body read with a cap, as both HTTP services read theirs: the bytes, or
/// ``tooLarge`` as soon as the body is known to pass the cap, so an oversize body is never held.
package enum BoundedRequestBody: Sendable {
    case bytes([UInt8])
    /// More bytes than the service's `--max-request-bytes`; the rest was not read.
    case tooLarge

    /// The body of `request`: ``tooLarge`` from `Content-Length` before reading, else while reading
    /// (a chunked body stops at `limit`).
    package static func read(_ request: Request, limit: Int) async -> BoundedRequestBody {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit { return .tooLarge }
        do {
            let buffer = try await request.body.collect(upTo: limit)
            return .bytes(Array(buffer.readableBytesView))
        } catch {
            // NIOTooManyBytesError, or the connection closed mid-body: neither is a request to answer.
            return error is NIOTooManyBytesError ? .tooLarge : .bytes([])
        }
    }
}
