@testable import KSMService
import Licensing
import Testing
import Tracing

@Suite struct OTLPTraceEncoderTests {
    private func encoder() -> OTLPTraceEncoder {
        var configuration = OTLPTracingConfiguration(endpoint: OTLPEndpoint(host: "127.0.0.1", port: 4318), serviceInstanceID: "pod-7")
        configuration.resourceAttributes = ["deployment.environment": "test", "service.name": "overridden"]
        return OTLPTraceEncoder(resource: configuration.resource, scopeName: OTLPTracingConfiguration.scopeName, scopeVersion: OTLPTracingConfiguration.version)
    }

    private func fullSpan() throws -> RecordedSpan {
        let traceID = try #require(TraceID(hex: Array(TracingFixtures.traceID.utf8)))
        var span = RecordedSpan(name: "fps.license", kind: .consumer,
                                context: TraceContext(traceID: traceID, spanID: SpanID(0x0102_0304_0506_0708), isSampled: true, traceState: "vendor=1"),
                                parentSpanID: SpanID(hex: Array(TracingFixtures.parentSpanID.utf8)), parentIsRemote: true,
                                startNanoseconds: 1_700_000_000_123_456_789)
        span.endNanoseconds = 18_446_744_073_709_551_615  // UInt64.max: must survive as a string, not a double
        span.attributes["s"] = "text \"quoted\""
        span.attributes["i"] = -42
        span.attributes["i32"] = Int32(7)
        span.attributes["d"] = 1.5
        span.attributes["nan"] = Double.nan
        span.attributes["b"] = false
        span.attributes["ss"] = ["a", "b"]
        span.attributes.set("is", value: .int64Array([1, 2, 3]))
        span.attributes["ds"] = [0.25, 2.0]
        span.attributes["bs"] = [true, false]
        span.attributes.set("conv", value: .stringConvertible(SpanID(0xFF)))
        span.events = [SpanEvent(name: "received", at: DefaultTracerClock.Instant(nanosecondsSinceEpoch: 1_700_000_000_123_456_790),
                                 attributes: ["n": 3])]
        span.links = [RecordedSpan.Link(context: TraceContext(traceID: TraceID(high: 9, low: 9), spanID: SpanID(9), isSampled: false), attributes: ["k": "v"])]
        span.status = SpanStatus(code: .error, message: "store down")
        span.droppedEvents = 2
        return span
    }

    @Test("OTLP JSON: resource, scope, hex IDs, string nanos, integer kind and status, every attribute type, events, links, flags")
    func fullEncoding() throws {
        let bytes = encoder().encode([try fullSpan()])
        let root = try JSONValue(parsing: bytes)
        let resourceSpans = try #require(root["resourceSpans"]?.arrayValue)
        #expect(resourceSpans.count == 1)
        let resource = try #require(resourceSpans[0]["resource"]?["attributes"])
        #expect(resource.attribute("service.name") == .object(["stringValue": .string("ksm")]))
        #expect(resource.attribute("service.instance.id") == .object(["stringValue": .string("pod-7")]))
        #expect(resource.attribute("telemetry.sdk.language") == .object(["stringValue": .string("swift")]))
        #expect(resource.attribute("telemetry.sdk.name") == .object(["stringValue": .string("fairplay-ksm")]))
        #expect(resource.attribute("deployment.environment") == .object(["stringValue": .string("test")]))
        let scopeSpans = try #require(resourceSpans[0]["scopeSpans"]?.arrayValue)
        #expect(scopeSpans[0]["scope"] == .object(["name": .string("fairplay-ksm"), "version": .string(OTLPTracingConfiguration.version)]))
        let spans = try #require(scopeSpans[0]["spans"]?.arrayValue)
        #expect(spans.count == 1)
        let span = spans[0]
        #expect(span["traceId"] == .string(TracingFixtures.traceID))
        #expect(span["spanId"] == .string("0102030405060708"))
        #expect(span["parentSpanId"] == .string(TracingFixtures.parentSpanID))
        #expect(span["traceState"] == .string("vendor=1"))
        #expect(span["name"] == .string("fps.license"))
        #expect(span["kind"] == .integer(5))
        #expect(span["startTimeUnixNano"] == .string("1700000000123456789"))
        #expect(span["endTimeUnixNano"] == .string("18446744073709551615"))
        // Sampled, parent known to be remote (bits 8 and 9).
        #expect(span["flags"] == .integer(0x301))
        #expect(span["status"] == .object(["code": .integer(2), "message": .string("store down")]))
        #expect(span["droppedEventsCount"] == .integer(2))
        #expect(span["droppedAttributesCount"] == nil)

        let attributes = try #require(span["attributes"])
        #expect(attributes.arrayValue?.compactMap { $0["key"]?.stringValue } == ["b", "bs", "conv", "d", "ds", "i", "i32", "is", "nan", "s", "ss"])
        #expect(attributes.attribute("s") == .object(["stringValue": .string("text \"quoted\"")]))
        #expect(attributes.attribute("i") == .object(["intValue": .string("-42")]))
        #expect(attributes.attribute("i32") == .object(["intValue": .string("7")]))
        #expect(attributes.attribute("d") == .object(["doubleValue": .number(1.5)]))
        #expect(attributes.attribute("nan") == .object(["doubleValue": .string("NaN")]))
        #expect(attributes.attribute("b") == .object(["boolValue": .bool(false)]))
        #expect(attributes.attribute("conv") == .object(["stringValue": .string("00000000000000ff")]))
        func array(_ values: [JSONValue]) -> JSONValue { .object(["arrayValue": .object(["values": .array(values)])]) }
        #expect(attributes.attribute("ss") == array([.object(["stringValue": .string("a")]), .object(["stringValue": .string("b")])]))
        #expect(attributes.attribute("is") == array([1, 2, 3].map { .object(["intValue": .string("\($0)")]) }))
        #expect(attributes.attribute("ds") == array([.object(["doubleValue": .number(0.25)]), .object(["doubleValue": .integer(2)])]))
        #expect(attributes.attribute("bs") == array([.object(["boolValue": .bool(true)]), .object(["boolValue": .bool(false)])]))

        let event = try #require(span["events"]?[0])
        #expect(event["name"] == .string("received"))
        #expect(event["timeUnixNano"] == .string("1700000000123456790"))
        #expect(event["attributes"]?.attribute("n") == .object(["intValue": .string("3")]))
        let link = try #require(span["links"]?[0])
        #expect(link["traceId"] == .string("00000000000000090000000000000009"))
        #expect(link["spanId"] == .string("0000000000000009"))
        #expect(link["flags"] == .integer(0x100))
        #expect(link["attributes"]?.attribute("k") == .object(["stringValue": .string("v")]))
    }

    @Test("Defaults are left out: a root span has no parentSpanId, traceState or status; OK has no message; kinds map to OTLP's enum")
    func minimalSpan() throws {
        var span = TracingFixtures.span("plain")
        span.kind = .server
        let root = try JSONValue(parsing: encoder().encode([span]))
        let encoded = try #require(root["resourceSpans"]?[0]?["scopeSpans"]?[0]?["spans"]?[0])
        guard case .object(let fields) = encoded else { Issue.record("not an object"); return }
        #expect(Set(fields.keys) == ["traceId", "spanId", "name", "kind", "startTimeUnixNano", "endTimeUnixNano", "flags"])
        #expect(fields["kind"] == .integer(2))
        #expect(fields["flags"] == .integer(1))
        span.status = SpanStatus(code: .ok, message: "dropped")
        let ok = try JSONValue(parsing: encoder().encode([span]))
        #expect(ok["resourceSpans"]?[0]?["scopeSpans"]?[0]?["spans"]?[0]?["status"] == .object(["code": .integer(1)]))
        #expect([SpanKind.internal, .server, .client, .producer, .consumer].map(OTLPTraceEncoder.kind) == [1, 2, 3, 4, 5])
    }
}
