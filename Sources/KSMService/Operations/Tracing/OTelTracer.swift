import Tracing

/// An OpenTelemetry-style tracer for swift-distributed-tracing, without swift-otel: W3C trace-context
/// propagation, random IDs, parent-based ratio sampling (``TraceSampler``), and finished sampled
/// spans handed to a ``SpanProcessor`` (``BatchSpanProcessor`` + ``OTLPHTTPExporter`` in `ksm serve`).
///
/// Bootstrap it once, before anything starts spans: `InstrumentationSystem.bootstrap(tracer)`.
/// Every span gets a fresh span ID and carries its own ``TraceContext`` in its `context`, so
/// `inject` of a span's context writes a `traceparent` with the same trace ID and the span's ID as
/// parent-id, sampled or not.
public struct OTelTracer: Tracer {
    public typealias Span = OTelSpan

    public let sampler: TraceSampler
    public let processor: any SpanProcessor
    public let limits: SpanLimits

    public init(sampler: TraceSampler = .parentBasedAlwaysOn, processor: any SpanProcessor, limits: SpanLimits = SpanLimits()) {
        self.sampler = sampler
        self.processor = processor
        self.limits = limits
    }

    /// Starts a span under the trace context found in `context` (a remote parent from `extract`, or
    /// a local span), or a new trace when there is none. The returned span's context is `context`
    /// with the span's own trace context in place of the parent's.
    public func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> InstrumentationContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> OTelSpan {
        var spanContext = context()
        let parent = spanContext.traceContext
        let traceID = parent?.traceID ?? TraceID.random()
        let sampled = sampler.shouldSample(parent: parent, traceID: traceID)
        let own = TraceContext(traceID: traceID, spanID: .random(), isSampled: sampled, traceState: parent?.traceState)
        spanContext.traceContext = own
        guard sampled else { return OTelSpan(context: spanContext, recorder: nil) }
        let record = RecordedSpan(name: operationName, kind: kind, context: own, parentSpanID: parent?.spanID,
                                  parentIsRemote: parent?.isRemote, startNanoseconds: instant().nanosecondsSinceEpoch)
        return OTelSpan(context: spanContext, recorder: OTelSpan.Recorder(record, processor: processor, limits: limits))
    }

    /// Asks the processor to export what it holds now; returns at once (``flush(timeout:)`` waits).
    public func forceFlush() {
        processor.forceFlush()
    }

    /// Exports everything ended so far; true when done within `timeout`.
    public func flush(timeout: Duration) async -> Bool {
        await processor.flush(timeout: timeout)
    }

    /// Reads `traceparent` and `tracestate` (W3C Trace Context) into `context`; a missing or
    /// malformed `traceparent` leaves `context` as it was, so the next span starts a new trace.
    public func extract<Carrier, Extract>(_ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract)
    where Extract: Extractor, Extract.Carrier == Carrier {
        guard let parent = extractor.extract(key: JobTracing.traceparent, from: carrier) else { return }
        let state = extractor.extract(key: JobTracing.tracestate, from: carrier)
        if let remote = TraceContext(traceparent: parent.utf8, tracestate: state?.utf8) {
            context.traceContext = remote
        }
    }

    /// Writes the context's trace context as `traceparent` (version 00) and, when there is one,
    /// `tracestate`. Nothing when the context holds no trace context.
    public func inject<Carrier, Inject>(_ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject)
    where Inject: Injector, Inject.Carrier == Carrier {
        guard let trace = context.traceContext else { return }
        injector.inject(trace.traceparent, forKey: JobTracing.traceparent, into: &carrier)
        if let state = trace.traceState { injector.inject(state, forKey: JobTracing.tracestate, into: &carrier) }
    }
}
