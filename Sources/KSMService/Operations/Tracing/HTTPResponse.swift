/// An HTTP/1.x response as the exporter needs it: status, headers, and the start of the body.
///
/// Parsed incrementally from the bytes received so far: "need more bytes" (``Parse/incomplete``)
/// is kept apart from "not HTTP" (``Parse/malformed(_:)``). The body is read by `Content-Length`,
/// chunked transfer coding, or until the connection closes, and is cut at a limit: only a partial
/// success or an error message is read from it.
struct HTTPResponse: Sendable {
    var status: Int
    /// Names lowercased, values trimmed, in order.
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    enum Parse {
        case incomplete
        case complete(HTTPResponse)
        case malformed(String)
    }

    /// A response head larger than this is refused.
    static let maximumHeadLength = 64 * 1024

    /// The last value of a header (names are case-insensitive).
    func header(_ name: String) -> String? {
        let name = name.lowercased()
        return headers.last { $0.name == name }?.value
    }

    /// Parses the bytes received so far.
    /// - Parameters:
    ///   - atEOF: the peer closed the connection: a body without a length ends here, anything
    ///     shorter than announced is malformed.
    ///   - bodyLimit: the body kept; once this many body bytes are in, the response is complete.
    static func parse(_ bytes: ArraySlice<UInt8>, atEOF: Bool, bodyLimit: Int = 64 * 1024) -> Parse {
        var bytes = bytes
        while true {
            guard let headEnd = headEnd(bytes) else {
                if bytes.count > maximumHeadLength { return .malformed("response head larger than \(maximumHeadLength) bytes") }
                return atEOF ? .malformed(bytes.isEmpty ? "connection closed without a response" : "connection closed inside the response head") : .incomplete
            }
            let head = String(decoding: bytes[bytes.startIndex..<headEnd], as: UTF8.self)
            var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
            let statusLine = lines.removeFirst()
            let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0", parts[1].count == 3,
                  let status = Int(parts[1]), (100...599).contains(status) else {
                return .malformed("not an HTTP/1.x status line")
            }
            var headers: [(name: String, value: String)] = []
            for line in lines where !line.isEmpty {
                guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else { return .malformed("malformed header line") }
                headers.append((line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingWhiteSpace))
            }
            let bodyStart = headEnd + 4
            // An interim response (100 Continue, 103 Early Hints): the real one follows.
            if status < 200, status != 101 {
                bytes = bytes[bodyStart...]
                continue
            }
            var response = HTTPResponse(status: status, headers: headers, body: [])
            let rest = bytes[bodyStart...]
            if status == 204 || status == 304 { return .complete(response) }
            if response.header("transfer-encoding")?.lowercased().contains("chunked") == true {
                switch dechunk(rest, atEOF: atEOF, limit: bodyLimit) {
                case .incomplete: return .incomplete
                case .malformed(let reason): return .malformed(reason)
                case .complete(let body):
                    response.body = body
                    return .complete(response)
                }
            }
            if let lengthText = response.header("content-length") {
                guard let length = Int(lengthText), length >= 0 else { return .malformed("invalid Content-Length") }
                let needed = min(length, bodyLimit)
                if rest.count >= needed {
                    response.body = Array(rest.prefix(needed))
                    return .complete(response)
                }
                return atEOF ? .malformed("connection closed inside the body") : .incomplete
            }
            // No length: the body runs to the end of the connection.
            if atEOF || rest.count >= bodyLimit {
                response.body = Array(rest.prefix(bodyLimit))
                return .complete(response)
            }
            return .incomplete
        }
    }

    private static func headEnd(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var i = bytes.startIndex
        while i + 3 < bytes.endIndex {
            if bytes[i] == 0x0D, bytes[i + 1] == 0x0A, bytes[i + 2] == 0x0D, bytes[i + 3] == 0x0A { return i }
            i += 1
        }
        return nil
    }

    private enum Dechunked {
        case incomplete
        case complete([UInt8])
        case malformed(String)
    }

    /// Chunked transfer coding (RFC 9112, 7.1): `size[;ext]CRLF data CRLF` ... `0 CRLF [trailers] CRLF`.
    private static func dechunk(_ bytes: ArraySlice<UInt8>, atEOF: Bool, limit: Int) -> Dechunked {
        var body: [UInt8] = []
        var index = bytes.startIndex
        while true {
            guard let lineEnd = crlf(bytes, from: index) else {
                return atEOF ? .malformed("connection closed inside a chunk") : .incomplete
            }
            let sizeText = bytes[index..<lineEnd].prefix { $0 != UInt8(ascii: ";") }
            guard !sizeText.isEmpty, sizeText.count <= 8, let size = Int(String(decoding: sizeText, as: UTF8.self).trimmingWhiteSpace, radix: 16) else {
                return .malformed("invalid chunk size")
            }
            index = lineEnd + 2
            if size == 0 { return .complete(body) }
            let available = bytes.endIndex - index
            if body.count + min(size, available) >= limit {
                body.append(contentsOf: bytes[index..<(index + min(size, available))].prefix(limit - body.count))
                return .complete(body)
            }
            guard available >= size + 2 else { return atEOF ? .malformed("connection closed inside a chunk") : .incomplete }
            body.append(contentsOf: bytes[index..<(index + size)])
            guard bytes[index + size] == 0x0D, bytes[index + size + 1] == 0x0A else { return .malformed("chunk not followed by CRLF") }
            index += size + 2
        }
    }

    private static func crlf(_ bytes: ArraySlice<UInt8>, from start: Int) -> Int? {
        var i = start
        while i + 1 < bytes.endIndex {
            if bytes[i] == 0x0D, bytes[i + 1] == 0x0A { return i }
            i += 1
        }
        return nil
    }
}
