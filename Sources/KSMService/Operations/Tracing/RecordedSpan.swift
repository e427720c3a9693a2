import Tracing

/// A finished, sampled span as the exporter sees it: plain values, copied out of the span once when
/// it ends, so the export thread never touches a live span.
public struct RecordedSpan: Sendable {
    /// A link to another span (swift-distributed-tracing's `SpanLink`, resolved to its trace context).
    public struct Link: Sendable {
        public var context: TraceContext
        public var attributes: SpanAttributes

        public init(context: TraceContext, attributes: SpanAttributes = [:]) {
            self.context = context
            self.attributes = attributes
        }
    }

    public var name: String
    public var kind: SpanKind
    /// The span's own trace ID, span ID, flags and `tracestate`.
    public var context: TraceContext
    /// Nil for a root span.
    public var parentSpanID: SpanID?
    /// Whether the parent came from another process; nil for a root span (OTLP `flags` bits 8 and 9).
    public var parentIsRemote: Bool?
    /// Wall clock, nanoseconds since the Unix epoch.
    public var startNanoseconds: UInt64
    /// Wall clock, nanoseconds since the Unix epoch; 0 until the span ends.
    public var endNanoseconds: UInt64 = 0
    public var attributes: SpanAttributes = [:]
    public var events: [SpanEvent] = []
    public var links: [Link] = []
    /// Nil while unset (OTLP `STATUS_CODE_UNSET`).
    public var status: SpanStatus?
    /// What the span limits (``SpanLimits``) or unresolvable links cost, reported to the collector.
    public var droppedAttributes = 0
    public var droppedEvents = 0
    public var droppedLinks = 0

    public init(name: String, kind: SpanKind, context: TraceContext, parentSpanID: SpanID? = nil, parentIsRemote: Bool? = nil,
                startNanoseconds: UInt64) {
        self.name = name
        self.kind = kind
        self.context = context
        self.parentSpanID = parentSpanID
        self.parentIsRemote = parentIsRemote
        self.startNanoseconds = startNanoseconds
    }
}
