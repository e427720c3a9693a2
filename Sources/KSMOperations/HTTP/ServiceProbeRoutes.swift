import Hummingbird
import Logging
import NIOCore

/// The routes `ksm speke` and `ksm edge` serve beside their own on their one port: `/healthz` (200
/// while the process runs), `/readyz` (the service's probe: 200, or 503 with the reason) and
/// `/metrics` (Prometheus text). One definition, so the two services' probes cannot drift apart.
extension Router {
    package func addServiceProbes(readiness: @escaping @Sendable () -> AdminServer.Probe, renderMetrics: @escaping @Sendable () -> String) {
        get("/healthz") { _, _ in HTTPAnswers.text(.ok, "ok") }
        get("/readyz") { _, _ in
            let probe = readiness()
            return HTTPAnswers.text(probe.ok ? .ok : .serviceUnavailable, probe.detail)
        }
        get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: renderMetrics())))
        }
    }
}

/// Hummingbird responses from the services' own answer values.
package enum HTTPAnswers {
    /// One line of plain text.
    package static func text(_ status: HTTPResponse.Status, _ line: String) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: line + "\n")))
    }

    /// `status` with `headers` (a name HTTP cannot carry is left out) and `body`.
    package static func response(status: Int, headers: [(name: String, value: String)], body: [UInt8]) -> Response {
        var fields = HTTPFields()
        for header in headers {
            guard let name = HTTPFields.Element.Name(header.name) else { continue }
            fields.append(HTTPFields.Element(name: name, value: header.value))
        }
        return Response(status: .init(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension Router where Context.Source == ApplicationRequestContextSource {
    /// Serves this router on `host:port` until graceful shutdown, as `ksm speke` and `ksm edge` do:
    /// HTTPS when `tls` is given (``TLSFiles``), else plain HTTP for an ingress to terminate; logs
    /// `listening` (the bound address and scheme) once the socket is open.
    package func serve(host: String, port: Int, tls: ServerTLS?, serverName: String, listening: String, logger: Logger) async throws {
        let application = Application(
            router: self,
            server: try TLSFiles.serverBuilder(tls: tls, idleTimeout: .seconds(60)),
            configuration: .init(address: .hostname(host, port: port), serverName: serverName),
            onServerRunning: { channel in
                logger.info(
                    "\(listening)",
                    metadata: [
                        "address": "\(channel.localAddress.map { "\($0)" } ?? "\(host):\(port)")", "scheme": "\(tls == nil ? "http" : "https")",
                    ])
            },
            logger: logger
        )
        try await application.run()
    }
}
