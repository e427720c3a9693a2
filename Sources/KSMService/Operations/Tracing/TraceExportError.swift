/// Why an export attempt failed. A struct with an extensible code; `description` names the endpoint
/// and the failure, never a header value (headers may carry API keys) nor span content.
public struct TraceExportError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure, also the `reason` label of `ksm_trace_export_errors_total`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        /// Name resolution, connect, send or receive failed, or the peer closed early.
        public static let connection = Code(rawValue: "connection")
        /// The export deadline (`OTEL_EXPORTER_OTLP_TIMEOUT`) passed.
        public static let timeout = Code(rawValue: "timeout")
        /// The collector answered with a status other than 2xx.
        public static let httpStatus = Code(rawValue: "http")
        /// The answer was not HTTP/1.x.
        public static let malformedResponse = Code(rawValue: "protocol")

        public var description: String { rawValue }
    }

    public var code: Code
    public var reason: String
    /// The HTTP status, for ``Code/httpStatus``.
    public var status: Int?
    /// True for connection failures, timeouts of one attempt, and 429, 502, 503, 504 (OTLP/HTTP
    /// "Retryable Response Codes"); other statuses mean the same request would fail again.
    public var isRetriable: Bool
    /// The collector's `Retry-After` (seconds form), honoured before the next attempt.
    public var retryAfter: Duration?

    public init(_ code: Code, _ reason: String, status: Int? = nil, isRetriable: Bool, retryAfter: Duration? = nil) {
        self.code = code
        self.reason = reason
        self.status = status
        self.isRetriable = isRetriable
        self.retryAfter = retryAfter
    }

    public var description: String { "\(code): \(reason)" }
}
