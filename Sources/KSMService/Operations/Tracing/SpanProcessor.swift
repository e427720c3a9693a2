/// Where ``OTelTracer`` hands each finished, sampled span. Called on whatever thread ended the span,
/// often a cooperative-pool thread: an implementation must not block (``BatchSpanProcessor`` only
/// appends to a bounded queue under a lock).
public protocol SpanProcessor: Sendable {
    /// Takes a finished span. Never blocks; may drop the span (and count it) when full.
    func onEnd(_ span: RecordedSpan)

    /// Asks for everything queued to be exported now; returns at once.
    func forceFlush()

    /// Exports everything queued before the call; true when that finished within `timeout`
    /// (exported or given up on), false when the time ran out first. Never blocks a thread.
    func flush(timeout: Duration) async -> Bool
}
