#if canImport(Glibc)
import Glibc
#endif
import Licensing

/// Exports spans as OTLP/HTTP with JSON encoding: `POST` of an `ExportTraceServiceRequest`
/// (``OTLPTraceEncoder``) to `http://host:port/v1/traces` with `Content-Type: application/json`.
///
/// Follows the OTLP/HTTP rules for answers: 2xx is success (a `partialSuccess` in the body counts
/// its `rejectedSpans` as lost); 429, 502, 503 and 504 and connection failures are retried
/// (``OTLPRetryPolicy``, honouring `Retry-After`); any other status drops the batch at once, as
/// the same request would fail again. Blocking: call it from the export thread only.
public struct OTLPHTTPExporter: SpanExporter {
    public let configuration: OTLPTracingConfiguration
    let encoder: OTLPTraceEncoder
    let client: BlockingHTTPClient

    public init(configuration: OTLPTracingConfiguration) {
        self.configuration = configuration
        encoder = OTLPTraceEncoder(resource: configuration.resource, scopeName: OTLPTracingConfiguration.scopeName,
                                   scopeVersion: OTLPTracingConfiguration.version)
        client = BlockingHTTPClient(endpoint: configuration.endpoint, extraHeaders: configuration.headers,
                                    userAgent: "fairplay-ksm-otlp/\(OTLPTracingConfiguration.version)")
    }

    public func export(_ spans: [RecordedSpan], deadline: ContinuousClock.Instant) -> SpanExportOutcome {
        guard !spans.isEmpty else { return SpanExportOutcome(accepted: 0) }
        let body = encoder.encode(spans)
        var failures: [TraceExportError] = []
        var attempt = 0
        while true {
            attempt += 1
            let failure: TraceExportError
            do {
                let response = try client.post(body, contentType: "application/json", deadline: deadline)
                if (200..<300).contains(response.status) {
                    let (rejected, message) = Self.partialSuccess(response.body)
                    guard rejected > 0 else { return SpanExportOutcome(accepted: spans.count, failedAttempts: failures) }
                    let lost = min(rejected, spans.count)
                    failures.append(TraceExportError(.httpStatus, "\(configuration.endpoint) rejected \(rejected) spans: \(message)",
                                                     status: response.status, isRetriable: false))
                    return SpanExportOutcome(accepted: spans.count - lost, lost: lost, isPartialSuccess: true, failedAttempts: failures)
                }
                failure = Self.statusError(response, endpoint: configuration.endpoint)
            } catch {
                failure = error
            }
            failures.append(failure)
            guard failure.isRetriable, attempt < configuration.retry.maximumAttempts else { break }
            let wait = failure.retryAfter ?? configuration.retry.backoff(after: attempt)
            guard ContinuousClock.now + wait < deadline else { break }
            Self.sleep(wait)
        }
        return SpanExportOutcome(accepted: 0, lost: spans.count, failedAttempts: failures)
    }

    /// A non-2xx answer as an error: retriable for 429, 502, 503, 504 (OTLP/HTTP), with the
    /// collector's `Retry-After` in seconds (an HTTP date is ignored: the backoff applies). The
    /// message quotes at most 200 printable characters of the body (a `google.rpc.Status` message).
    static func statusError(_ response: HTTPResponse, endpoint: OTLPEndpoint) -> TraceExportError {
        let retriable = [429, 502, 503, 504].contains(response.status)
        let retryAfter = response.header("retry-after").flatMap { Int($0) }.flatMap { $0 >= 0 ? Duration.seconds($0) : nil }
        var detail = String(decoding: response.body.prefix(200).map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: " ") }, as: UTF8.self)
        if let value = try? JSONValue(parsing: response.body), case .object(let fields) = value, case .string(let message)? = fields["message"] {
            detail = String(message.prefix(200))
        }
        return TraceExportError(.httpStatus, "\(endpoint) answered \(response.status)" + (detail.isEmpty ? "" : ": \(detail)"),
                                status: response.status, isRetriable: retriable, retryAfter: retryAfter)
    }

    /// `ExportTraceServiceResponse.partialSuccess`: `rejectedSpans` (int64, a string or a number in
    /// JSON) and `errorMessage`. (0, "") for an empty body, one without it, or one that is not JSON
    /// (a collector answering protobuf): success then means every span was accepted.
    static func partialSuccess(_ body: [UInt8]) -> (rejected: Int, message: String) {
        guard !body.isEmpty, let value = try? JSONValue(parsing: body), case .object(let fields) = value,
              case .object(let partial)? = fields["partialSuccess"] else { return (0, "") }
        let rejected: Int
        switch partial["rejectedSpans"] {
        case .integer(let n)?: rejected = Int(clamping: n)
        case .string(let text)?: rejected = Int(text) ?? 0
        default: rejected = 0
        }
        guard case .string(let message)? = partial["errorMessage"] else { return (max(0, rejected), "") }
        return (max(0, rejected), String(message.prefix(200)))
    }

    /// Blocks the export thread (never a pool thread) for a backoff.
    private static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}
