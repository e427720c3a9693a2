import Kafka
import Testing
import Tracing

@testable import KSMService

/// W3C trace context through swift-otel's tracer and propagator, and the pass-through that works
/// with tracing off. What the spans hold on export is checked against a collector in FleetTests.
@Suite struct TraceContextTests {
    private func headers(_ traceparent: String, _ tracestate: String? = nil) -> [(String, [UInt8])] {
        var out: [(String, [UInt8])] = [("correlation-id", Array("c-1".utf8)), ("traceparent", Array(traceparent.utf8))]
        if let tracestate { out.append(("tracestate", Array(tracestate.utf8))) }
        return out
    }

    private func message(_ headers: [(String, [UInt8])]) -> KafkaMessage {
        KafkaMessage(topic: "fps.license.requests", partition: 3, offset: 42, key: nil, value: Array("not a job".utf8), headers: headers)
    }

    private func text(_ headers: [(String, [UInt8])], _ name: String) -> String? {
        headers.first { $0.0 == name }.map { String(decoding: $0.1, as: UTF8.self) }
    }

    /// `00-traceid-spanid-flags` split into its four fields.
    private func fields(_ traceparent: String?) -> [String] {
        traceparent.map { $0.split(separator: "-").map(String.init) } ?? []
    }

    @Test("A job's span continues the job's trace: the reply's traceparent keeps the trace ID and tracestate and names the span as parent")
    func replyNamesTheJobSpan() throws {
        let tracer = try TracingFixtures.tracer()
        let message = message(headers(TracingFixtures.traceparent, "edge=1"))
        let span = JobTracing.start(ScheduledJob(message: message, sequence: 0), tracer: tracer)
        #expect(span.isRecording)
        JobTracing.recordOutcome(.deadLetter(reason: "not JSON"), on: span)
        let reply = JobTracing.replyHeaders(for: message, span: span, tracer: tracer)
        span.end()
        let parts = fields(text(reply, "traceparent"))
        #expect(parts.count == 4)
        #expect(parts.first == "00" && parts.dropFirst().first == TracingFixtures.traceID)
        #expect(parts.dropFirst(2).first != TracingFixtures.parentSpanID && parts.dropFirst(2).first?.count == 16)
        #expect(parts.last == "01")
        #expect(text(reply, "tracestate") == "edge=1")
    }

    @Test("An unsampled parent is honoured whatever the root ratio: nothing is recorded, but the reply carries the trace with a new parent-id and flags 00")
    func unsampledParentPropagates() throws {
        let tracer = try TracingFixtures.tracer(rootSampleRatio: 1)
        let message = message(headers("00-\(TracingFixtures.traceID)-\(TracingFixtures.parentSpanID)-00"))
        let span = JobTracing.start(ScheduledJob(message: message, sequence: 0), tracer: tracer)
        #expect(!span.isRecording)
        let parts = fields(text(JobTracing.replyHeaders(for: message, span: span, tracer: tracer), "traceparent"))
        span.end()
        #expect(parts.count == 4 && parts[1] == TracingFixtures.traceID && parts[2] != TracingFixtures.parentSpanID && parts[3] == "00")
    }

    @Test("A sampled parent is honoured at root ratio 0; root spans follow the ratio (0 records none, 1 all)")
    func parentBasedRatioSampling() throws {
        let none = try TracingFixtures.tracer(rootSampleRatio: 0)
        let sampledParent = message(headers(TracingFixtures.traceparent))
        #expect(JobTracing.start(ScheduledJob(message: sampledParent, sequence: 0), tracer: none).isRecording)
        let root = message([])
        for _ in 0..<50 { #expect(!JobTracing.start(ScheduledJob(message: root, sequence: 0), tracer: none).isRecording) }
        let all = try TracingFixtures.tracer(rootSampleRatio: 1)
        for _ in 0..<50 { #expect(JobTracing.start(ScheduledJob(message: root, sequence: 0), tracer: all).isRecording) }
    }

    @Test("A later traceparent version is read as version 00 fields (W3C 3.2.4): the span continues its trace")
    func laterVersion() throws {
        let tracer = try TracingFixtures.tracer()
        let message = message(headers("cc" + TracingFixtures.traceparent.dropFirst(2) + "-what-ever"))
        let span = JobTracing.start(ScheduledJob(message: message, sequence: 0), tracer: tracer)
        let parts = fields(text(JobTracing.replyHeaders(for: message, span: span, tracer: tracer), "traceparent"))
        span.end()
        #expect(parts.count == 4 && parts[0] == "00" && parts[1] == TracingFixtures.traceID)
        #expect(JobTracing.passThrough(headers("cc" + TracingFixtures.traceparent.dropFirst(2) + "x")).isEmpty)
        #expect(JobTracing.passThrough(headers(TracingFixtures.traceparent + "-extra")).isEmpty)
    }

    @Test("A job without a usable traceparent starts a new trace: the reply carries a fresh lowercase trace ID")
    func rootSpans() throws {
        let tracer = try TracingFixtures.tracer()
        var traceIDs: Set<String> = []
        for bad in [
            "junk", "00-\(TracingFixtures.traceID.uppercased())-\(TracingFixtures.parentSpanID)-01",
            "00-00000000000000000000000000000000-\(TracingFixtures.parentSpanID)-01",
        ] {
            let message = message(headers(bad))
            let span = JobTracing.start(ScheduledJob(message: message, sequence: 0), tracer: tracer)
            let parts = fields(text(JobTracing.replyHeaders(for: message, span: span, tracer: tracer), "traceparent"))
            span.end()
            #expect(parts.count == 4, "\(bad)")
            guard parts.count == 4 else { continue }
            #expect(parts[1] != TracingFixtures.traceID && parts[1].count == 32 && parts[1] == parts[1].lowercased(), "\(bad)")
            traceIDs.insert(parts[1])
        }
        #expect(traceIDs.count == 3)
    }

    @Test("With tracing off the job's own well-formed traceparent and tracestate pass through; malformed ones and long or unprintable tracestate do not")
    func passThrough() {
        let valid = TracingFixtures.traceparent
        let noop = NoOpTracer()
        let message = message(headers(valid, "edge=1"))
        let reply = JobTracing.replyHeaders(for: message, span: JobTracing.start(ScheduledJob(message: message, sequence: 0), tracer: noop), tracer: noop)
        #expect(reply.map(\.0) == ["traceparent", "tracestate"])
        #expect(reply.first?.1 == Array(valid.utf8))
        #expect(JobTracing.replyHeaders(for: message, span: nil, tracer: noop).map(\.0) == ["traceparent", "tracestate"])
        for bad in [
            "", "junk", "00-\(TracingFixtures.traceID)-\(TracingFixtures.parentSpanID)", "ff" + valid.dropFirst(2),
            "00-00000000000000000000000000000000-\(TracingFixtures.parentSpanID)-01", "00-\(TracingFixtures.traceID)-0000000000000000-01",
            "00-\(TracingFixtures.traceID.uppercased())-\(TracingFixtures.parentSpanID)-01",
        ] {
            #expect(JobTracing.passThrough(headers(bad, "a=1")).isEmpty, "\(bad)")
        }
        #expect(JobTracing.passThrough(headers(valid, String(repeating: "a", count: 513))).map(\.0) == ["traceparent"])
        #expect(JobTracing.passThrough([("traceparent", Array(valid.utf8)), ("tracestate", [0x61, 0x0A, 0x62])]).map(\.0) == ["traceparent"])
    }
}
