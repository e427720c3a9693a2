import Kafka
@testable import KSMService
import Testing
import Tracing

@Suite struct TraceContextTests {
    private func headers(_ traceparent: String, _ tracestate: String? = nil) -> [(String, [UInt8])] {
        var out: [(String, [UInt8])] = [("correlation-id", Array("c-1".utf8)), ("traceparent", Array(traceparent.utf8))]
        if let tracestate { out.append(("tracestate", Array(tracestate.utf8))) }
        return out
    }

    @Test("traceparent: a job's context is extracted, the span continues its trace, and the reply's traceparent names the span as parent")
    func extractInjectRoundTrip() throws {
        let processor = CollectingProcessor()
        let tracer = OTelTracer(processor: processor)
        var context = InstrumentationContext.topLevel
        tracer.extract(headers(TracingFixtures.traceparent, "vendor=abc,other=1"), into: &context, using: JobTracing.HeaderExtractor())
        let remote = try #require(context.traceContext)
        #expect(remote.traceID.hexString == TracingFixtures.traceID)
        #expect(remote.spanID.hexString == TracingFixtures.parentSpanID)
        #expect(remote.isSampled && remote.isRemote)

        let span = tracer.startSpan("fps.license", context: context, ofKind: .consumer)
        var reply: [(String, [UInt8])] = []
        tracer.inject(span.context, into: &reply, using: JobTracing.HeaderInjector())
        span.end()
        let injected = try #require(reply.first { $0.0 == "traceparent" }).1
        let own = try #require(TraceContext(traceparent: injected))
        let ended = try #require(processor.ended.first)
        #expect(String(decoding: injected, as: UTF8.self) == "00-\(TracingFixtures.traceID)-\(ended.context.spanID.hexString)-01")
        #expect(own.traceID == remote.traceID)
        #expect(own.spanID != remote.spanID)
        #expect(ended.parentSpanID == remote.spanID)
        #expect(ended.parentIsRemote == true)
        #expect(ended.kind == .consumer)
        #expect(reply.first { $0.0 == "tracestate" }.map { String(decoding: $0.1, as: UTF8.self) } == "vendor=abc,other=1")
    }

    @Test("An unsampled parent: no span is recorded, but the reply still carries the trace with a new parent-id and flags 00")
    func unsampledParentPropagates() throws {
        let processor = CollectingProcessor()
        let tracer = OTelTracer(sampler: .parentBased(rootRatio: 1), processor: processor)
        var context = InstrumentationContext.topLevel
        tracer.extract(headers("00-\(TracingFixtures.traceID)-\(TracingFixtures.parentSpanID)-00"), into: &context, using: JobTracing.HeaderExtractor())
        let span = tracer.startSpan("fps.license", context: context, ofKind: .consumer)
        #expect(!span.isRecording)
        span.attributes["fps.request_id"] = "r-1"
        span.addEvent("processed")
        span.end()
        #expect(processor.ended.isEmpty)
        var reply: [(String, [UInt8])] = []
        tracer.inject(span.context, into: &reply, using: JobTracing.HeaderInjector())
        let text = String(decoding: try #require(reply.first { $0.0 == "traceparent" }).1, as: UTF8.self)
        #expect(text.hasPrefix("00-\(TracingFixtures.traceID)-"))
        #expect(text.hasSuffix("-00"))
        #expect(!text.contains(TracingFixtures.parentSpanID))
    }

    @Test("A job without a usable traceparent starts a new trace: random, non-zero, lowercase IDs and no parent")
    func rootSpans() throws {
        let processor = CollectingProcessor()
        let tracer = OTelTracer(processor: processor)
        var context = InstrumentationContext.topLevel
        tracer.extract(headers("00-\(TracingFixtures.traceID.uppercased())-\(TracingFixtures.parentSpanID)-01"), into: &context, using: JobTracing.HeaderExtractor())
        #expect(context.traceContext == nil)
        var traceIDs: Set<TraceID> = []
        for _ in 0..<200 {
            let span = tracer.startSpan("root", context: context)
            span.end()
        }
        for span in processor.ended {
            #expect(span.parentSpanID == nil && span.parentIsRemote == nil)
            #expect(span.context.traceID != TraceID(high: 0, low: 0))
            #expect(span.context.spanID.value != 0)
            #expect(span.context.traceID.hexString.count == 32 && span.context.spanID.hexString.count == 16)
            #expect(span.context.traceID.hexString == span.context.traceID.hexString.lowercased())
            traceIDs.insert(span.context.traceID)
        }
        #expect(traceIDs.count == 200)
        #expect(processor.ended.count == 200)
    }

    @Test("traceparent parsing follows W3C Trace Context: versions, zero IDs, case, flags, tracestate limits")
    func parsing() {
        let valid = TracingFixtures.traceparent
        #expect(TraceContext(traceparent: Array(valid.utf8))?.isSampled == true)
        #expect(TraceContext(traceparent: Array("00-\(TracingFixtures.traceID)-\(TracingFixtures.parentSpanID)-02".utf8))?.isSampled == false)
        for bad in ["", "00-\(TracingFixtures.traceID)-\(TracingFixtures.parentSpanID)", valid + "-extra",
                    "ff" + valid.dropFirst(2), "00-00000000000000000000000000000000-\(TracingFixtures.parentSpanID)-01",
                    "00-\(TracingFixtures.traceID)-0000000000000000-01", "00_\(TracingFixtures.traceID)-\(TracingFixtures.parentSpanID)-01",
                    "00-\(TracingFixtures.traceID)-\(TracingFixtures.parentSpanID)-0g", "0A" + valid.dropFirst(2)] {
            #expect(TraceContext(traceparent: Array(bad.utf8)) == nil, "\(bad)")
        }
        // A later version may append fields after a dash.
        #expect(TraceContext(traceparent: Array(("cc" + valid.dropFirst(2) + "-what-ever").utf8)) != nil)
        #expect(TraceContext(traceparent: Array(("cc" + valid.dropFirst(2) + "x").utf8)) == nil)
        // tracestate: kept when printable and at most 512 bytes, dropped alone otherwise.
        #expect(TraceContext(traceparent: Array(valid.utf8), tracestate: Array("a=1".utf8))?.traceState == "a=1")
        let long = String(repeating: "a", count: 513)
        let withLong = TraceContext(traceparent: Array(valid.utf8), tracestate: Array(long.utf8))
        #expect(withLong != nil && withLong?.traceState == nil)
        #expect(TraceContext(traceparent: Array(valid.utf8), tracestate: [0x61, 0x0A, 0x62])?.traceState == nil)
        #expect(TraceContext(traceID: TraceID(high: 1, low: 2), spanID: SpanID(3), isSampled: false).traceparent
                == "00-00000000000000010000000000000002-0000000000000003-00")
    }

    @Test("Span API: status rules, recordError, end once, attribute limit")
    func spanAPI() throws {
        let processor = CollectingProcessor()
        var limits = SpanLimits()
        limits.attributeCount = 2
        let tracer = OTelTracer(processor: processor, limits: limits)
        let span = tracer.startSpan("op", context: .topLevel, ofKind: .client)
        span.attributes["c"] = "3"
        span.attributes["a"] = 1
        span.attributes["b"] = true
        span.setStatus(SpanStatus(code: .ok, message: "ignored"))
        span.setStatus(SpanStatus(code: .error, message: "after ok: ignored"))
        struct Failure: Error, CustomStringConvertible { var description: String { "store down" } }
        span.recordError(Failure())
        span.operationName = "renamed"
        #expect(span.isRecording)
        span.end()
        #expect(!span.isRecording)
        span.attributes["late"] = "x"
        span.end()
        #expect(processor.ended.count == 1)
        let ended = try #require(processor.ended.first)
        #expect(ended.name == "renamed")
        #expect(ended.status == SpanStatus(code: .ok))
        #expect(ended.attributes.count == 2 && ended.droppedAttributes == 1)
        #expect(ended.attributes.get("a") == .int64(1) && ended.attributes.get("b") == .bool(true) && ended.attributes.get("c") == nil)
        let exception = try #require(ended.events.first)
        #expect(exception.name == "exception")
        #expect(exception.attributes.get("exception.message") == .string("store down"))
        #expect(exception.attributes.get("exception.type").map { "\($0)" }?.contains("Failure") == true)
        #expect(ended.endNanoseconds >= ended.startNanoseconds)
    }

    @Test("A job's span: JobTracing opens a consumer span from the Kafka headers; the reply gets the tracer's injection, or the pass-through with the no-op tracer")
    func jobSpanAndReplyHeaders() throws {
        let message = KafkaMessage(topic: "fps.license.requests", partition: 3, offset: 42, key: nil, value: Array("not a job".utf8),
                                   headers: headers(TracingFixtures.traceparent, "edge=1"))
        let job = ScheduledJob(message: message, sequence: 0)
        let processor = CollectingProcessor()
        let tracer = OTelTracer(processor: processor)
        let span = JobTracing.start(job, tracer: tracer)
        JobTracing.recordOutcome(.deadLetter(reason: "not JSON"), on: span)
        let reply = JobTracing.replyHeaders(for: message, span: span, tracer: tracer)
        span.end()
        let ended = try #require(processor.ended.first)
        #expect(ended.name == "fps.license" && ended.kind == .consumer)
        #expect(ended.context.traceID.hexString == TracingFixtures.traceID)
        #expect(ended.parentSpanID?.hexString == TracingFixtures.parentSpanID)
        #expect(ended.attributes.get("messaging.kafka.message.offset") == .int64(42))
        #expect(ended.attributes.get("messaging.destination.name") == .string("fps.license.requests"))
        #expect(ended.events.map(\.name) == ["received", "processed"])
        #expect(ended.status?.code == .error)
        #expect(reply.map(\.0) == ["traceparent", "tracestate"])
        #expect(reply.first.map { String(decoding: $0.1, as: UTF8.self) } == "00-\(TracingFixtures.traceID)-\(ended.context.spanID.hexString)-01")

        // The no-op tracer injects nothing: the job's own headers pass through unchanged.
        let noop = NoOpTracer()
        let passThrough = JobTracing.replyHeaders(for: message, span: JobTracing.start(job, tracer: noop), tracer: noop)
        #expect(passThrough.map(\.0) == ["traceparent", "tracestate"])
        #expect(passThrough.first?.1 == Array(TracingFixtures.traceparent.utf8))
        #expect(JobTracing.replyHeaders(for: message, span: nil, tracer: tracer).first?.1 == Array(TracingFixtures.traceparent.utf8))
    }
}
