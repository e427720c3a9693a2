import Synchronization
import Tracing

/// A span of ``OTelTracer``. A sampled span records into a locked ``RecordedSpan`` and hands it to
/// the processor when it ends; an unsampled one is only its context (trace ID, its own span ID,
/// flags 00), so it still propagates to the reply and costs no allocation beyond the context.
public struct OTelSpan: Tracing.Span {
    public let context: InstrumentationContext
    /// Nil when the span is not sampled.
    let recorder: Recorder?

    init(context: InstrumentationContext, recorder: Recorder?) {
        self.context = context
        self.recorder = recorder
    }

    /// The span's own trace context (always present: the tracer puts it in `context`).
    public var traceContext: TraceContext? { context.traceContext }

    /// True until a sampled span ends; always false for an unsampled span.
    public var isRecording: Bool { recorder?.isRecording ?? false }

    public var operationName: String {
        get { recorder?.read { $0.name } ?? "" }
        nonmutating set { recorder?.update { $0.name = newValue } }
    }

    public var attributes: SpanAttributes {
        get { recorder?.read { $0.attributes } ?? [:] }
        nonmutating set { recorder?.update { $0.attributes = newValue } }
    }

    /// OpenTelemetry's rule: `ok` is final (later statuses are ignored), and only `error` keeps a
    /// description.
    public func setStatus(_ status: SpanStatus) {
        recorder?.update { span in
            if span.status?.code == .ok { return }
            span.status = status.code == .ok ? SpanStatus(code: .ok) : status
        }
    }

    public func addEvent(_ event: SpanEvent) {
        guard let recorder else { return }
        let limit = recorder.limits.eventCount
        recorder.update { span in
            if span.events.count < limit { span.events.append(event) } else { span.droppedEvents += 1 }
        }
    }

    /// An `exception` event with `exception.type` and `exception.message` (OpenTelemetry semantic
    /// conventions); the status is left to the caller. The message is the error's description,
    /// which in this project never holds key material (style guide, Errors).
    public func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        guard recorder != nil else { return }
        var eventAttributes = attributes
        eventAttributes["exception.type"] = String(reflecting: type(of: error))
        eventAttributes["exception.message"] = String(describing: error)
        addEvent(SpanEvent(name: "exception", at: instant(), attributes: eventAttributes))
    }

    /// Links to spans of this tracer or extracted ones; a link whose context holds no trace context
    /// (another tracer's) cannot be exported and is counted as dropped.
    public func addLink(_ link: SpanLink) {
        guard let recorder else { return }
        let limit = recorder.limits.linkCount
        let resolved = link.context.traceContext
        recorder.update { span in
            if let resolved, span.links.count < limit {
                span.links.append(RecordedSpan.Link(context: resolved, attributes: link.attributes))
            } else {
                span.droppedLinks += 1
            }
        }
    }

    /// Ends the span; only the first call counts. The span goes to the processor with attributes
    /// over the limit dropped (in key order, so the choice is stable) and counted.
    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        recorder?.end(at: instant().nanosecondsSinceEpoch)
    }
}

extension OTelSpan {
    /// The mutable half of a sampled span: one lock around the record, and where it goes at the end.
    final class Recorder: Sendable {
        private let state: Mutex<(span: RecordedSpan, ended: Bool)>
        let processor: any SpanProcessor
        let limits: SpanLimits

        init(_ span: RecordedSpan, processor: any SpanProcessor, limits: SpanLimits) {
            state = Mutex((span, false))
            self.processor = processor
            self.limits = limits
        }

        var isRecording: Bool { state.withLock { !$0.ended } }

        func read<T: Sendable>(_ body: (RecordedSpan) -> T) -> T {
            state.withLock { body($0.span) }
        }

        /// Changes the record unless the span has ended (an ended span is immutable).
        func update(_ body: (inout RecordedSpan) -> Void) {
            state.withLock { state in
                guard !state.ended else { return }
                body(&state.span)
            }
        }

        func end(at nanoseconds: UInt64) {
            let finished: RecordedSpan? = state.withLock { state in
                guard !state.ended else { return nil }
                state.ended = true
                state.span.endNanoseconds = nanoseconds
                return state.span
            }
            guard var span = finished else { return }
            if span.attributes.count > limits.attributeCount {
                var names: [String] = []
                span.attributes.forEach { name, _ in names.append(name) }
                for name in names.sorted().dropFirst(limits.attributeCount) { span.attributes[name] = nil }
                span.droppedAttributes = names.count - limits.attributeCount
            }
            processor.onEnd(span)
        }
    }
}
