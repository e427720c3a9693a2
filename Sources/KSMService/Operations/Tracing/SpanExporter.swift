/// Sends batches of finished spans somewhere. ``BatchSpanProcessor`` calls it on its own thread, one
/// batch at a time, so an implementation may block on sockets (and must return by `deadline`).
public protocol SpanExporter: Sendable {
    /// Exports one batch, retrying as the transport allows, and says what became of it.
    /// - Parameter deadline: when to give up, retries included (`OTEL_EXPORTER_OTLP_TIMEOUT` after
    ///   the start, or sooner during a shutdown flush).
    func export(_ spans: [RecordedSpan], deadline: ContinuousClock.Instant) -> SpanExportOutcome
}

/// What became of one batch: how many spans the collector took, how many are lost, and every
/// failed attempt (for `ksm_trace_export_errors_total` and the rate-limited log line).
public struct SpanExportOutcome: Sendable {
    /// Spans the collector accepted.
    public var accepted: Int
    /// Spans lost: the whole batch when every attempt failed, or those a partial success rejected.
    public var lost: Int
    /// True when `lost` counts spans the collector rejected in a partial success (the batch arrived).
    public var isPartialSuccess: Bool
    /// Every failed attempt, in order; the last one is why the batch was lost, if it was.
    public var failedAttempts: [TraceExportError]

    public init(accepted: Int, lost: Int = 0, isPartialSuccess: Bool = false, failedAttempts: [TraceExportError] = []) {
        self.accepted = accepted
        self.lost = lost
        self.isPartialSuccess = isPartialSuccess
        self.failedAttempts = failedAttempts
    }
}
