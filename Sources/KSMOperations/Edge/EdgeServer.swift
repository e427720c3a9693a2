import Hummingbird
import KSMService
import Logging
import NIOCore
import ServiceLifecycle

/// `ksm edge`'s one port: `POST /fps/{tenant}/license`, and beside it `/healthz`, `/readyz` (the
/// producer reached a broker and the reply topic is assigned) and `/metrics` (Prometheus text), over
/// HTTP/1.1 on hummingbird, inside TLS when a certificate is configured (``TLSFiles``), else plain
/// for an ingress to terminate. As ``SpekeServer``: a `Service`, so on graceful shutdown hummingbird
/// stops accepting and lets requests in flight finish (each bounded by the deadline).
package struct EdgeServer: Service {
    package let host: String
    package let port: Int
    let route: EdgeLicenseRoute
    let metrics: EdgeMetrics
    let readiness: @Sendable () -> AdminServer.Probe
    let renderMetrics: @Sendable () -> String
    let logger: Logger
    let tls: ServerTLS?
    /// `GET /fps/{tenant}/certificate`.
    let certificates: EdgeCertificateRoute

    package init(
        host: String, port: Int, route: EdgeLicenseRoute, metrics: EdgeMetrics, readiness: @escaping @Sendable () -> AdminServer.Probe,
        renderMetrics: @escaping @Sendable () -> String, logger: Logger, tls: ServerTLS? = nil,
        certificates: EdgeCertificateRoute = EdgeCertificateRoute(certificates: nil)
    ) {
        self.host = host
        self.port = port
        self.route = route
        self.metrics = metrics
        self.readiness = readiness
        self.renderMetrics = renderMetrics
        self.logger = logger
        self.tls = tls
        self.certificates = certificates
    }

    package func run() async throws {
        try await router().serve(host: host, port: port, tls: tls, serverName: "ksm-edge", listening: "license edge listening", logger: logger)
    }

    func router() -> Router<EdgeRequestContext> {
        let router = Router(context: EdgeRequestContext.self)
        router.post("/fps/:tenant/license") { [route, metrics] request, context in
            let start = ContinuousClock.now
            let limit = route.configuration.maximumRequestBytes
            let headers = request.headers.map { (name: $0.name.canonicalName, value: $0.value) }
            var query: [String: String] = [:]
            for (name, value) in request.uri.queryParameters { query[String(name)] = String(value) }
            let routeRequest = EdgeLicenseRoute.Request(
                tenant: context.parameters.get("tenant") ?? "", headers: headers, query: query, clientAddress: context.clientAddress,
                readBody: { await BoundedRequestBody.read(request, limit: limit) })
            let result = await route.answer(routeRequest)
            metrics.record(
                tenant: result.tenant, priority: result.priority, shape: result.shape, outcome: result.outcome, duration: ContinuousClock.now - start)
            return Self.response(result.answer)
        }
        router.get("/fps/:tenant/certificate") { [certificates] request, context in
            var query: [String: String] = [:]
            for (name, value) in request.uri.queryParameters { query[String(name)] = String(value) }
            return Self.response(await certificates.answer(tenant: context.parameters.get("tenant") ?? "", query: query))
        }
        router.addServiceProbes(readiness: readiness, renderMetrics: renderMetrics)
        return router
    }

    static func response(_ answer: LicenseHTTPAnswer) -> Response {
        HTTPAnswers.response(
            status: answer.status, headers: [(name: "Content-Type", value: answer.contentType)] + answer.headers.map { (name: $0.name, value: $0.value) },
            body: answer.body)
    }
}
