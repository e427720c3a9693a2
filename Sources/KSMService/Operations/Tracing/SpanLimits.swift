/// Caps on what one span may hold, so a chatty caller cannot grow the export queue without bound.
/// What goes over is counted in the span's `dropped...Count` fields rather than silently lost.
public struct SpanLimits: Sendable, Hashable {
    /// Default: 128, as OpenTelemetry's `OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT`.
    public var attributeCount = 128
    /// Default: 128, as `OTEL_SPAN_EVENT_COUNT_LIMIT`.
    public var eventCount = 128
    /// Default: 128, as `OTEL_SPAN_LINK_COUNT_LIMIT`.
    public var linkCount = 128

    public init() {}
}
