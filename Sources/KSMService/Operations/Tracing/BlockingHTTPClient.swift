#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 POST over a fresh TCP connection, with blocking semantics and a hard deadline.
///
/// Only for the trace export thread (``BatchSpanProcessor``): it resolves, connects, sends and
/// receives with `poll` on a non-blocking socket, so every step ends by the deadline, and never
/// runs on Swift's cooperative pool. `Connection: close`: one request per connection is plenty for
/// a batch every few seconds, and leaves no idle connection to go stale between batches.
struct BlockingHTTPClient: Sendable {
    let endpoint: OTLPEndpoint
    /// Sent with every request after the exporter's own (validated by ``OTLPTracingConfiguration``).
    let extraHeaders: [(name: String, value: String)]
    let userAgent: String

    /// Posts `body` and returns the response (body cut at 64 KiB).
    func post(_ body: [UInt8], contentType: String, deadline: ContinuousClock.Instant) throws(TraceExportError) -> HTTPResponse {
        var head = "POST \(endpoint.path) HTTP/1.1\r\nHost: \(endpoint.hostHeader)\r\nUser-Agent: \(userAgent)\r\n"
            + "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        for (name, value) in extraHeaders { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        let request = Array(head.utf8) + body

        let fd = try connect(deadline: deadline)
        defer { close(fd) }
        try send(request, on: fd, deadline: deadline)
        return try receive(on: fd, deadline: deadline)
    }

    private func timedOut(_ step: String) -> TraceExportError {
        TraceExportError(.timeout, "\(step) \(endpoint) timed out", isRetriable: true)
    }

    private func connectionError(_ step: String, _ code: Int32) -> TraceExportError {
        TraceExportError(.connection, "\(step) \(endpoint): \(String(cString: strerror(code)))", isRetriable: true)
    }

    /// Milliseconds left for `poll`, or nil once the deadline passed.
    private func remainingMilliseconds(_ deadline: ContinuousClock.Instant) -> Int32? {
        let left = deadline - .now
        guard left > .zero else { return nil }
        let (seconds, attoseconds) = left.components
        return Int32(clamping: max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000))
    }

    /// Waits until `fd` is ready for `events`; throws at the deadline.
    private func wait(_ fd: Int32, _ events: Int32, deadline: ContinuousClock.Instant, step: String) throws(TraceExportError) {
        while true {
            guard let timeout = remainingMilliseconds(deadline) else { throw timedOut(step) }
            var pfd = pollfd(fd: fd, events: Int16(events), revents: 0)
            let n = poll(&pfd, 1, timeout)
            if n > 0 { return }
            if n < 0, errno != EINTR { throw connectionError(step, errno) }
        }
    }

    private func connect(deadline: ContinuousClock.Instant) throws(TraceExportError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &list)
        guard resolved == 0, let first = list else {
            throw TraceExportError(.connection, "cannot resolve \(endpoint.host): \(String(cString: gai_strerror(resolved)))", isRetriable: true)
        }
        defer { freeaddrinfo(list) }
        var lastError: TraceExportError?
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
            guard fd >= 0 else {
                lastError = connectionError("socket for", errno)
                continue
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
            guard errno == EINPROGRESS else {
                lastError = connectionError("connect to", errno)
                close(fd)
                continue
            }
            do {
                try wait(fd, Int32(POLLOUT), deadline: deadline, step: "connect to")
            } catch {
                close(fd)
                throw error
            }
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length)
            if code == 0 { return fd }
            lastError = connectionError("connect to", code)
            close(fd)
        }
        throw lastError ?? TraceExportError(.connection, "no address for \(endpoint.host)", isRetriable: true)
    }

    private func send(_ bytes: [UInt8], on fd: Int32, deadline: ContinuousClock.Instant) throws(TraceExportError) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                sent += n
            } else if n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                try wait(fd, Int32(POLLOUT), deadline: deadline, step: "send to")
            } else {
                throw connectionError("send to", errno)
            }
        }
    }

    private func receive(on fd: Int32, deadline: ContinuousClock.Instant) throws(TraceExportError) -> HTTPResponse {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            try wait(fd, Int32(POLLIN), deadline: deadline, step: "response from")
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                throw connectionError("receive from", errno)
            }
            if n > 0 { received.append(contentsOf: buffer[0..<n]) }
            switch HTTPResponse.parse(received[...], atEOF: n == 0) {
            case .complete(let response): return response
            case .malformed(let reason):
                // Closed before a single byte: the collector went away (restart, idle cut); try again.
                if n == 0, received.isEmpty { throw TraceExportError(.connection, "\(endpoint) closed the connection without a response", isRetriable: true) }
                throw TraceExportError(.malformedResponse, "\(endpoint): \(reason)", isRetriable: false)
            case .incomplete: continue
            }
        }
    }
}
