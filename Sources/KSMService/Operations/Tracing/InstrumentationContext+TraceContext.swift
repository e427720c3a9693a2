import Tracing

extension InstrumentationContext {
    /// The trace context of the current span (or, after ``OTelTracer``'s `extract`, of the remote
    /// parent). Nil when no trace is known: a span started under it is a root span.
    public internal(set) var traceContext: TraceContext? {
        get { self[TraceContextKey.self] }
        set { self[TraceContextKey.self] = newValue }
    }
}

/// The `InstrumentationContext` (`ServiceContext`) key of ``TraceContext``; private to this module so only the tracer sets it.
enum TraceContextKey: InstrumentationContextKey {
    typealias Value = TraceContext
    static var nameOverride: String? { "traceparent" }
}
