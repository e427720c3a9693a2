import Foundation
import Logging
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

/// The worker's admin port: `/healthz`, `/readyz` and Prometheus `/metrics`, over plain HTTP/1.0.
///
/// A few requests a minute from probes and a scraper: one dedicated thread with a blocking accept
/// loop is enough, keeps socket calls off Swift's cooperative pool, and needs no HTTP stack.
public final class AdminServer: Service, Sendable {
    /// What a probe gets: HTTP status and a one-line body.
    public struct Probe: Sendable {
        public var ok: Bool
        public var detail: String
        public init(ok: Bool, detail: String) {
            self.ok = ok
            self.detail = detail
        }
    }

    public let port: Int
    let host: String
    let health: @Sendable () -> Probe
    let readiness: @Sendable () -> Probe
    let metrics: @Sendable () -> String
    let logger: Logger

    public init(port: Int, host: String = "0.0.0.0", health: @escaping @Sendable () -> Probe, readiness: @escaping @Sendable () -> Probe,
                metrics: @escaping @Sendable () -> String, logger: Logger) {
        self.port = port
        self.host = host
        self.health = health
        self.readiness = readiness
        self.metrics = metrics
        self.logger = logger
    }

    public struct BindError: Error, CustomStringConvertible {
        public var description: String
    }

    public func run() async throws {
        let fd = try bindListener()
        let stop = StopFlag()
        let done = AsyncStream<Void>.makeStream()
        let thread = Thread { [self] in
            self.acceptLoop(fd, stop: stop)
            close(fd)
            done.continuation.finish()
        }
        thread.name = "ksm-admin"
        thread.start()
        logger.info("admin port listening", metadata: ["port": "\(port)"])
        await withGracefulShutdownHandler {
            for await _ in done.stream {}
        } onGracefulShutdown: {
            stop.set()
        }
    }

    private func bindListener() throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BindError(description: "admin port: socket() failed: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        let bound = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard bound, listen(fd, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw BindError(description: "admin port \(host):\(port): \(reason)")
        }
        return fd
    }

    private func acceptLoop(_ fd: Int32, stop: StopFlag) {
        while !stop.isSet {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 200) > 0 else { continue }
            let client = accept(fd, nil, nil)
            guard client >= 0 else { continue }
            serve(client)
            close(client)
        }
    }

    private func serve(_ client: Int32) {
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        // Read the request head (capped at 8 KiB); only its first line matters.
        while request.count < 8192, !request.containsHeaderEnd {
            let n = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            request.append(contentsOf: buffer[0..<n])
        }
        let line = String(decoding: request.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
        let parts = line.split(separator: " ")
        let (status, type, body): (String, String, String)
        if parts.count >= 2, parts[0] == "GET" {
            switch parts[1].split(separator: "?").first ?? "" {
            case "/healthz":
                let probe = health()
                (status, type, body) = (probe.ok ? "200 OK" : "503 Service Unavailable", "text/plain", probe.detail + "\n")
            case "/readyz":
                let probe = readiness()
                (status, type, body) = (probe.ok ? "200 OK" : "503 Service Unavailable", "text/plain", probe.detail + "\n")
            case "/metrics":
                (status, type, body) = ("200 OK", "text/plain; version=0.0.4", metrics())
            default:
                (status, type, body) = ("404 Not Found", "text/plain", "try /healthz, /readyz or /metrics\n")
            }
        } else {
            (status, type, body) = ("405 Method Not Allowed", "text/plain", "GET only\n")
        }
        let payload = Array(body.utf8)
        let response = Array("HTTP/1.0 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(payload.count)\r\nConnection: close\r\n\r\n".utf8) + payload
        var sent = 0
        while sent < response.count {
            let n = response[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { break }
            sent += n
        }
    }
}

/// A flag set once from any thread.
final class StopFlag: @unchecked Sendable {
    // @unchecked: the Bool is only read and written under `lock`.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); value = true; lock.unlock() }
}

extension Array where Element == UInt8 {
    fileprivate var containsHeaderEnd: Bool {
        guard count >= 4 else { return false }
        for i in 0...(count - 4) where self[i] == 0x0D && self[i + 1] == 0x0A && self[i + 2] == 0x0D && self[i + 3] == 0x0A { return true }
        return false
    }
}
