import Hummingbird
import KSMService
import Logging
import NIOCore
import ServiceLifecycle

/// `ksm speke`'s one port: `POST /speke/v2/{tenant}/copyProtection`, and beside it `/healthz`,
/// `/readyz` (Redis answers PING) and `/metrics` (Prometheus text), on hummingbird: HTTP/1.1, or with
/// a certificate configured (``TLSFiles``) HTTPS, HTTP/2 or HTTP/1.1 by ALPN; plain HTTP is for an
/// ingress that terminates TLS.
///
/// One port for both, unlike `ksm serve`'s separate admin port: the service has no other listener,
/// and an ingress routes `/speke/` to the packagers while probes and the scraper reach the pod
/// directly. A `Service`: on graceful shutdown hummingbird stops accepting and lets requests in
/// flight finish.
package struct SpekeServer: Service {
    package let host: String
    package let port: Int
    let provider: SpekeKeyProvider
    let metrics: SpekeMetrics
    let readiness: @Sendable () -> AdminServer.Probe
    let renderMetrics: @Sendable () -> String
    let logger: Logger
    /// HTTPS with this configuration; nil for plain HTTP.
    let tls: ServerTLS?

    package init(
        host: String, port: Int, provider: SpekeKeyProvider, metrics: SpekeMetrics, readiness: @escaping @Sendable () -> AdminServer.Probe,
        renderMetrics: @escaping @Sendable () -> String, logger: Logger, tls: ServerTLS? = nil
    ) {
        self.host = host
        self.port = port
        self.provider = provider
        self.metrics = metrics
        self.readiness = readiness
        self.renderMetrics = renderMetrics
        self.logger = logger
        self.tls = tls
    }

    package func run() async throws {
        try await router().serve(host: host, port: port, tls: tls, serverName: "ksm-speke", listening: "SPEKE key provider listening", logger: logger)
    }

    // `HTTPFields.Element` is swift-http-types' `HTTPField`, reached through the type hummingbird re-exports.
    private static let spekeVersion = HTTPFields.Element.Name("X-Speke-Version")

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.post("/speke/v2/:tenant/copyProtection") { [self] request, context in
            let start = ContinuousClock.now
            let tenant = context.parameters.get("tenant") ?? ""
            let answer = await provider.answer(
                tenant: tenant, authorization: request.headers[.authorization],
                spekeVersion: Self.spekeVersion.flatMap { request.headers[$0] },
                readBody: { await BoundedRequestBody.read(request, limit: provider.limits.maximumBytes) })
            metrics.record(tenant: tenant, outcome: answer.outcome, keys: answer.keysIssued, duration: ContinuousClock.now - start)
            return Self.response(answer)
        }
        router.addServiceProbes(readiness: readiness, renderMetrics: renderMetrics)
        return router
    }

    static func response(_ answer: SpekeHTTPResponse) -> Response {
        HTTPAnswers.response(status: answer.status, headers: answer.headers.map { (name: $0.name, value: $0.value) }, body: answer.body)
    }
}
