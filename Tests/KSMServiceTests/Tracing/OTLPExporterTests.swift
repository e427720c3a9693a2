import Foundation
@testable import KSMService
import KSMTestSupport
import Licensing
import Logging
import ServiceLifecycleTestKit
import Testing
import Tracing
#if canImport(Glibc)
import Glibc
#endif

/// The exporter against a real HTTP collector on loopback (``OTLPTestCollector``): what goes over
/// the wire, and how failures are retried.
@Suite(.serialized, .timeLimit(.minutes(1))) struct OTLPExporterTests {
    private func configuration(_ url: String, attempts: Int = 3) throws -> OTLPTracingConfiguration {
        var configuration = OTLPTracingConfiguration(endpoint: try OTLPEndpoint(url: url), serviceInstanceID: "test-1")
        configuration.headers = [("x-api-key", "secret-value"), ("X-Tenant", "acme")]
        configuration.retry.initialBackoff = .milliseconds(10)
        configuration.retry.maximumBackoff = .milliseconds(50)
        configuration.retry.maximumAttempts = attempts
        return configuration
    }

    private func spans(_ names: [String]) -> [RecordedSpan] { names.map(TracingFixtures.span) }

    private func exportedSpans(_ request: OTLPTestCollector.Request) throws -> [JSONValue] {
        let root = try JSONValue(parsing: request.body)
        return try #require(root["resourceSpans"]?[0]?["scopeSpans"]?[0]?["spans"]?.arrayValue)
    }

    @Test("A batch is one POST /v1/traces with application/json, the configured headers, and the spans as OTLP JSON")
    func exportsToCollector() throws {
        let collector = try OTLPTestCollector()
        let exporter = OTLPHTTPExporter(configuration: try configuration(collector.tracesURL))
        let batch = spans(["a", "b", "c"])
        let outcome = exporter.export(batch, deadline: .now + .seconds(20))
        #expect(outcome.accepted == 3 && outcome.lost == 0 && outcome.failedAttempts.isEmpty)
        let requests = collector.requests
        #expect(requests.count == 1)
        let request = try #require(requests.first)
        #expect(request.method == "POST")
        #expect(request.target == "/v1/traces")
        #expect(request.header("content-type") == "application/json")
        #expect(request.header("content-length") == "\(request.body.count)")
        #expect(request.header("host") == "127.0.0.1:\(collector.port)")
        #expect(request.header("x-api-key") == "secret-value")
        #expect(request.header("x-tenant") == "acme")
        let exported = try exportedSpans(request)
        #expect(exported.compactMap { $0["name"]?.stringValue } == ["a", "b", "c"])
        #expect(exported.compactMap { $0["traceId"]?.stringValue } == batch.map(\.context.traceID.hexString))
        collector.stop()
    }

    @Test("503 (with Retry-After) and 429 are retried with the same body; the batch then counts as accepted")
    func retriesRetriableStatuses() throws {
        let collector = try OTLPTestCollector(script: [
            .init(status: 503, headers: [("Retry-After", "0")], body: "{\"code\":14,\"message\":\"busy\"}"), .init(status: 429),
        ])
        let exporter = OTLPHTTPExporter(configuration: try configuration(collector.tracesURL))
        let outcome = exporter.export(spans(["r"]), deadline: .now + .seconds(20))
        #expect(outcome.accepted == 1 && outcome.lost == 0)
        #expect(outcome.failedAttempts.map(\.status) == [503, 429])
        #expect(outcome.failedAttempts.first?.description.contains("busy") == true)
        let requests = collector.requests
        #expect(requests.count == 3)
        #expect(Set(requests.map(\.body)).count == 1)
        collector.stop()
    }

    @Test("400 is not retried: the batch is lost at once")
    func doesNotRetryBadRequest() throws {
        let collector = try OTLPTestCollector(script: [.init(status: 400, body: "{\"message\":\"bad\"}")])
        let exporter = OTLPHTTPExporter(configuration: try configuration(collector.tracesURL))
        let outcome = exporter.export(spans(["x", "y"]), deadline: .now + .seconds(20))
        #expect(outcome.accepted == 0 && outcome.lost == 2)
        #expect(outcome.failedAttempts.count == 1)
        #expect(outcome.failedAttempts.first?.code == .httpStatus && outcome.failedAttempts.first?.isRetriable == false)
        #expect(collector.requests.count == 1)
        collector.stop()
    }

    @Test("A partial success counts its rejected spans as lost")
    func partialSuccess() throws {
        let collector = try OTLPTestCollector(script: [.init(status: 200, body: "{\"partialSuccess\":{\"rejectedSpans\":\"2\",\"errorMessage\":\"too old\"}}")])
        let exporter = OTLPHTTPExporter(configuration: try configuration(collector.tracesURL))
        let outcome = exporter.export(spans(["p", "q", "r"]), deadline: .now + .seconds(20))
        #expect(outcome.accepted == 1 && outcome.lost == 2 && outcome.isPartialSuccess)
        #expect(outcome.failedAttempts.first?.description.contains("too old") == true)
        collector.stop()
    }

    @Test("Connection refused is retried up to the attempt limit, then the batch is lost; headers never reach the error text")
    func connectionRefused() throws {
        let port = try RedisServerProcess.freeLoopbackPort()
        let exporter = OTLPHTTPExporter(configuration: try configuration("http://127.0.0.1:\(port)/v1/traces", attempts: 3))
        let outcome = exporter.export(spans(["z"]), deadline: .now + .seconds(20))
        #expect(outcome.accepted == 0 && outcome.lost == 1)
        #expect(outcome.failedAttempts.count == 3)
        #expect(outcome.failedAttempts.allSatisfy { $0.code == .connection && $0.isRetriable })
        #expect(!outcome.failedAttempts.map(\.description).joined().contains("secret-value"))
    }

    @Test("A collector that accepts the connection and never answers times out at the deadline")
    func timeout() throws {
        // A listening socket nobody accepts from: the kernel completes the handshake, no answer comes.
        let (fd, port) = try LoopbackSocket.bound()
        defer { close(fd) }
        #expect(listen(fd, 4) == 0)
        let exporter = OTLPHTTPExporter(configuration: try configuration("http://127.0.0.1:\(port)/v1/traces"))
        let start = ContinuousClock.now
        let outcome = exporter.export(spans(["t"]), deadline: start + .milliseconds(400))
        let took = ContinuousClock.now - start
        #expect(outcome.lost == 1)
        #expect(outcome.failedAttempts.last?.code == .timeout)
        #expect(took >= .milliseconds(350) && took < .seconds(30), "\(took)")
    }

    @Test("Tracer, batch processor and exporter together: job spans reach the collector with the job's trace and parent, and the metrics count them")
    func pipeline() async throws {
        let collector = try OTLPTestCollector(script: [.init(status: 503)])
        var configuration = try configuration(collector.tracesURL)
        // No scheduled export during the test: a task stalled between two span ends would send a
        // partial batch. Only graceful shutdown's flush exports, all three spans in one batch, with
        // a flush budget no stall of a loaded CI host outlasts.
        configuration.batch.scheduleDelay = .seconds(60)
        configuration.batch.shutdownFlushTimeout = .seconds(30)
        configuration.batch.exportTimeout = .seconds(30)
        let processor = BatchSpanProcessor(exporter: OTLPHTTPExporter(configuration: configuration), configuration: configuration.batch,
                                           logger: Logger(label: "test"))
        let tracer = OTelTracer(sampler: configuration.sampler, processor: processor)
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await processor.run() }
                for n in 0..<3 {
                    var context = InstrumentationContext.topLevel
                    tracer.extract([("traceparent", Array(TracingFixtures.traceparent.utf8))], into: &context, using: JobTracing.HeaderExtractor())
                    let span = tracer.startSpan("fps.license", context: context, ofKind: .consumer)
                    span.attributes["fps.request_id"] = "job-\(n)"
                    span.end()
                }
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
        let requests = collector.requests
        #expect(requests.count == 2, "one 503, then the retry")
        let exported = try exportedSpans(try #require(requests.last))
        #expect(exported.count == 3)
        for span in exported {
            #expect(span["traceId"] == .string(TracingFixtures.traceID))
            #expect(span["parentSpanId"] == .string(TracingFixtures.parentSpanID))
            #expect(span["kind"] == .integer(5))
        }
        #expect(Set(exported.compactMap { $0["attributes"]?.attribute("fps.request_id")?["stringValue"]?.stringValue }) == ["job-0", "job-1", "job-2"])
        let s = processor.snapshot
        #expect(s.exported == 3)
        #expect(s.exportErrors["http"] == 1)
        collector.stop()
    }
}
