/// Where OTLP/HTTP spans go: `http://host[:port][/path]`, plain HTTP only.
///
/// No TLS on purpose: this package has no TLS client outside librdkafka, and an OpenTelemetry
/// Collector next to the worker (a sidecar or a node agent on 127.0.0.1:4318) is the usual place to
/// add TLS, authentication, retries across restarts and fan-out. `https://` is refused with that advice.
public struct OTLPEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// A host name, an IPv4 address, or an IPv6 address without its brackets.
    public var host: String
    /// Default: 80, as for any `http://` URL without a port.
    public var port: Int
    /// The request target: path and query, `/` when the URL has none.
    public var path: String

    /// The OTLP/HTTP path of traces, appended to `OTEL_EXPORTER_OTLP_ENDPOINT`.
    public static let tracesPath = "/v1/traces"

    public init(host: String, port: Int, path: String = tracesPath) {
        self.host = host
        self.port = port
        self.path = path
    }

    /// Parses a signal-specific URL (`--otlp-endpoint`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), used as
    /// it is: a URL without a path posts to `/` (OpenTelemetry's rule for these variables).
    public init(url: String) throws(OTLPConfigurationError) {
        let text = Self.redacted(url.trimmingWhiteSpace)
        let url = url.trimmingWhiteSpace
        let lowered = url.lowercased()
        if lowered.hasPrefix("https://") {
            throw OTLPConfigurationError("OTLP endpoint \(text): https is not supported; this exporter speaks plain http only. "
                + "Run an OpenTelemetry Collector next to the worker (OTLP/HTTP receiver on 127.0.0.1:4318), point --otlp-endpoint "
                + "at http://127.0.0.1:4318/v1/traces, and let the collector forward over TLS")
        }
        guard lowered.hasPrefix("http://") else {
            throw OTLPConfigurationError("OTLP endpoint \(text): expected http://host:port/path")
        }
        let rest = url.dropFirst("http://".count)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var target = String(rest[authorityEnd...])
        if let fragment = target.firstIndex(of: "#") { target = String(target[..<fragment]) }
        if target.isEmpty { target = "/" } else if target.hasPrefix("?") { target = "/" + target }
        guard !authority.contains("@") else {
            throw OTLPConfigurationError("OTLP endpoint: credentials in the URL are not supported; use OTEL_EXPORTER_OTLP_HEADERS")
        }
        let host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw OTLPConfigurationError("OTLP endpoint \(text): unclosed IPv6 address") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw OTLPConfigurationError("OTLP endpoint \(text): unexpected text after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw OTLPConfigurationError("OTLP endpoint \(text): no host")
        }
        var port = 80
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else { throw OTLPConfigurationError("OTLP endpoint \(text): invalid port") }
            port = value
        }
        guard target.allSatisfy({ $0.isASCII && !$0.isWhitespace && !$0.isNewline }) else {
            throw OTLPConfigurationError("OTLP endpoint \(text): the path must be ASCII without spaces (percent-encode it)")
        }
        self.init(host: String(host), port: port, path: target)
    }

    /// Parses the all-signals base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`) and appends `/v1/traces` to
    /// its path, as OpenTelemetry specifies for that variable.
    public init(baseURL: String) throws(OTLPConfigurationError) {
        var endpoint = try OTLPEndpoint(url: baseURL)
        let (path, query) = endpoint.path.firstIndex(of: "?").map { (String(endpoint.path[..<$0]), String(endpoint.path[$0...])) } ?? (endpoint.path, "")
        endpoint.path = (path.hasSuffix("/") ? String(path.dropLast()) : path) + Self.tracesPath + query
        self = endpoint
    }

    /// The `Host` header: `host:port`, brackets around an IPv6 address.
    var hostHeader: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

    /// For logs and errors: the query is replaced by `?...`, as vendors put API keys there.
    public var description: String { Self.redacted("http://\(hostHeader)\(path)") }

    static func redacted(_ url: String) -> String {
        guard let query = url.firstIndex(of: "?") else { return url }
        return url[..<query] + "?..."
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs and newlines (no Foundation needed).
    var trimmingWhiteSpace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
