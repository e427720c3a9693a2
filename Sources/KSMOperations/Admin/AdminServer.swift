import Hummingbird
import KSMService
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The worker's admin port: `/healthz`, `/readyz`, Prometheus `/metrics` and `/status` (one JSON
/// object for tests, benchmarks and scripts, so none reads log text), over HTTP/1.1 on hummingbird.
///
/// Connections are served concurrently on swift-nio's event loops, so idle or slow clients cannot
/// hold up a probe (the hand-written server before it served one connection at a time: three idle
/// connections pushed `/healthz` past the liveness probe's 3 s timeout). By default it listens on
/// `::`, which on Linux is dual-stack (IPv4 too, `net.ipv6.bindv6only=0`); where the host has no
/// IPv6 it falls back to `0.0.0.0`. A `Service`: it stops accepting on graceful shutdown, after the
/// worker (it sits before the worker in the group) so probes keep answering while the worker drains.
package final class AdminServer: Service, Sendable {
    /// What a probe gets: HTTP status and a one-line body.
    package struct Probe: Sendable {
        package var ok: Bool
        package var detail: String
        package init(ok: Bool, detail: String) {
            self.ok = ok
            self.detail = detail
        }
    }

    /// The admin port could not be opened: the message names the port and the reason.
    package struct BindError: Error, CustomStringConvertible {
        package var port: Int
        package var reason: String
        /// The socket error, if that is what it was.
        var code: Int32?
        package init(port: Int, reason: String) {
            self.port = port
            self.reason = reason
        }
        package var description: String { "admin port \(port) cannot be opened: \(reason); choose another --admin-port" }
    }

    package let port: Int
    /// Nil: `::` (dual-stack), falling back to `0.0.0.0` without IPv6.
    let host: String?
    let health: @Sendable () -> Probe
    let readiness: @Sendable () -> Probe
    let metrics: @Sendable () -> String
    /// Nil: no `/status` route.
    let status: (@Sendable () -> WorkerStatus)?
    let logger: Logger
    /// Connections idle this long are closed. Default: 60 s.
    let idleTimeout: Duration

    package init(
        port: Int, host: String? = nil, idleTimeout: Duration = .seconds(60),
        health: @escaping @Sendable () -> Probe, readiness: @escaping @Sendable () -> Probe,
        metrics: @escaping @Sendable () -> String, status: (@Sendable () -> WorkerStatus)? = nil, logger: Logger
    ) {
        self.port = port
        self.host = host
        self.idleTimeout = idleTimeout
        self.health = health
        self.readiness = readiness
        self.metrics = metrics
        self.status = status
        self.logger = logger
    }

    package func run() async throws {
        guard (0...65535).contains(port) else { throw BindError(port: port, reason: "a port is a number from 1 to 65535") }
        if let host {
            try await serve(on: host)
            return
        }
        do {
            try await serve(on: "::")
        } catch let error as BindError where error.isMissingIPv6 {
            logger.notice("no IPv6 on this host: the admin port listens on IPv4 only", metadata: ["port": "\(port)"])
            try await serve(on: "0.0.0.0")
        }
    }

    private func serve(on host: String) async throws {
        let started = StartFlag()
        let application = Application(
            router: router(),
            server: .http1(configuration: .init(idleTimeout: .nanoseconds(Int64(idleTimeout.components.seconds) * 1_000_000_000))),
            configuration: .init(address: .hostname(host, port: port), serverName: "ksm-admin"),
            onServerRunning: { [logger, port] channel in
                started.set()
                logger.info("admin port listening", metadata: ["port": "\(port)", "address": "\(channel.localAddress.map { "\($0)" } ?? host)"])
            },
            logger: logger
        )
        do {
            try await application.run()
        } catch {
            guard !started.isSet else { throw error }
            throw BindError(port: port, reason: Self.reason(error), code: (error as? IOError)?.errnoCode)
        }
    }

    private func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/healthz") { [health] _, _ in Self.text(health()) }
        router.get("/readyz") { [readiness] _, _ in Self.text(readiness()) }
        router.get("/metrics") { [metrics] _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: metrics())))
        }
        if let status {
            router.get("/status") { _, _ in
                Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: status().jsonBytes)))
            }
        }
        return router
    }

    private static func text(_ probe: Probe) -> Response {
        Response(
            status: probe.ok ? .ok : .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: probe.detail + "\n")))
    }

    /// A person's reason, not a debug description: the C library's text for a socket error.
    private static func reason(_ error: any Error) -> String {
        if let io = error as? IOError { return String(cString: strerror(io.errnoCode)).lowercased() }
        return "\(error)"
    }
}

extension AdminServer.BindError {
    init(port: Int, reason: String, code: Int32?) {
        self.init(port: port, reason: reason)
        self.code = code
    }

    /// The host has no IPv6 (`::` cannot be bound, IPv4 may still work).
    var isMissingIPv6: Bool { code == EAFNOSUPPORT || code == EADDRNOTAVAIL }
}

/// Set once the server is listening; read after `run()` returned or threw.
private final class StartFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
