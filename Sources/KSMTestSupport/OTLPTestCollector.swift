import Foundation
import Loopback

#if canImport(Glibc)
    import Glibc
    import OwnedThreads
#endif

/// A tiny OTLP/HTTP collector for tests: an HTTP/1.1 server on a free loopback port, on a thread of
/// its own, that records every request (method, target, headers, body) and answers from a script
/// (e.g. one 503, then 200s), so a test can check what an exporter sent and how it retried.
///
/// Parses requests itself (request line, headers, `Content-Length` or chunked body) and keeps the
/// connection open between requests unless the client asks to close it.
package final class OTLPTestCollector: Sendable {

    /// One answer: status, extra headers (e.g. `Retry-After`) and a body.
    package struct Response: Sendable {
        package var status: Int
        package var headers: [(String, String)]
        package var body: String

        package init(status: Int, headers: [(String, String)] = [], body: String = "{}") {
            self.status = status
            self.headers = headers
            self.body = body
        }

        package static let ok = Response(status: 200)
    }

    /// One request as received.
    package struct Request: Sendable {
        package var method: String
        package var target: String
        /// Names lowercased.
        package var headers: [(String, String)]
        package var body: [UInt8]
        package var receivedAt: ContinuousClock.Instant

        package func header(_ name: String) -> String? { headers.last { $0.0 == name.lowercased() }?.1 }
    }

    private let core: Core

    /// The loopback port it listens on.
    package var port: Int { core.port }

    /// The traces URL to give an exporter.
    package var tracesURL: String { "http://127.0.0.1:\(port)/v1/traces" }

    /// - Parameters:
    ///   - script: answers for the first requests, in order.
    ///   - fallback: the answer once the script is used up. Default: 200 with `{}`.
    package init(script: [Response] = [], fallback: Response = .ok) throws {
        core = try Core(script: script, fallback: fallback)
    }

    /// Stops the server when the test drops it (the thread holds only the core, never this object).
    deinit { core.stop() }

    /// Stops accepting and closes the listener; waits for the thread to finish.
    package func stop() { core.stop() }

    /// Every request so far.
    package var requests: [Request] { core.requests }

    /// Waits until `condition` holds for the requests received (polling every 20 ms).
    @discardableResult
    package func wait(timeout: Duration = .seconds(10), until condition: ([Request]) -> Bool) async throws -> [Request] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let now = requests
            if condition(now) { return now }
            guard ContinuousClock.now < deadline else {
                throw CollectorTimeout(description: "collector: condition not met within \(timeout); \(now.count) requests")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    package struct CollectorTimeout: Error, CustomStringConvertible {
        package var description: String
    }
}

/// The listener, its thread and what it recorded.
private final class Core: @unchecked Sendable {
    // @unchecked: `received`, `script` and `stopped` are only touched under `lock`; the rest is immutable.
    typealias Request = OTLPTestCollector.Request
    typealias Response = OTLPTestCollector.Response

    let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var received: [Request] = []
    private var script: [Response]
    private let fallback: Response
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    init(script: [Response] = [], fallback: Response = .ok) throws {
        self.script = script
        self.fallback = fallback
        let (fd, boundPort) = try LoopbackSocket.bound()
        guard listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        listener = fd
        port = boundPort
        OwnedThread.start(name: "otlp-test-collector") { [self] in
            serveLoop()
            done.signal()
        }.detach()
    }

    /// Stops accepting and closes the listener; waits for the thread to finish.
    func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        guard !wasStopped else { return }
        done.wait()
        close(listener)
    }

    /// Every request so far.
    var requests: [Request] { lock.withLock { received } }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func serveLoop() {
        while !isStopped {
            var pfd = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 50) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            serve(client)
            close(client)
        }
    }

    /// Serves requests on one connection until the client closes it or asks to.
    private func serve(_ client: Int32) {
        var buffer: [UInt8] = []
        while !isStopped {
            guard let (request, rest) = readRequest(client, buffer: buffer) else { return }
            buffer = rest
            let response: Response = lock.withLock {
                received.append(request)
                return script.isEmpty ? fallback : script.removeFirst()
            }
            let reason =
                [
                    200: "OK", 400: "Bad Request", 429: "Too Many Requests", 500: "Internal Server Error",
                    502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
                ][response.status] ?? "Status"
            let body = Array(response.body.utf8)
            var head = "HTTP/1.1 \(response.status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n"
            for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
            head += "\r\n"
            let bytes = Array(head.utf8) + body
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { return }
                sent += n
            }
            if request.header("connection")?.lowercased() == "close" { return }
        }
    }

    /// Reads one whole request; nil when the connection closed (or stalled 5 s) first.
    private func readRequest(_ client: Int32, buffer start: [UInt8]) -> (Request, [UInt8])? {
        var bytes = start
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        func more() -> Bool {
            var pfd = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 5000) > 0 else { return false }
            let n = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return false }
            bytes.append(contentsOf: chunk[0..<n])
            return true
        }
        var headEnd: Int?
        while headEnd == nil {
            headEnd = Self.find([0x0D, 0x0A, 0x0D, 0x0A], in: bytes, from: 0)
            if headEnd == nil, !more() { return nil }
        }
        guard let end = headEnd else { return nil }
        let lines = String(decoding: bytes[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count == 3 else { return nil }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var request = Request(
            method: String(requestLine[0]), target: String(requestLine[1]), headers: headers, body: [],
            receivedAt: .now)
        var index = end + 4
        if request.header("transfer-encoding")?.lowercased().contains("chunked") == true {
            while true {
                var lineEnd = Self.find([0x0D, 0x0A], in: bytes, from: index)
                while lineEnd == nil {
                    guard more() else { return nil }
                    lineEnd = Self.find([0x0D, 0x0A], in: bytes, from: index)
                }
                guard let sizeEnd = lineEnd,
                    let size = Int(String(decoding: bytes[index..<sizeEnd], as: UTF8.self).split(separator: ";").first ?? "", radix: 16)
                else { return nil }
                index = sizeEnd + 2
                while bytes.count < index + size + 2 { guard more() else { return nil } }
                if size == 0 {
                    index += 2
                    break
                }
                request.body.append(contentsOf: bytes[index..<(index + size)])
                index += size + 2
            }
        } else {
            let length = Int(request.header("content-length") ?? "0") ?? 0
            while bytes.count < index + length { guard more() else { return nil } }
            request.body = Array(bytes[index..<(index + length)])
            index += length
        }
        return (request, Array(bytes[min(index, bytes.count)...]))
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        for i in start...(bytes.count - needle.count) where bytes[i..<(i + needle.count)].elementsEqual(needle) { return i }
        return nil
    }
}
