import FairPlayDevice
import Foundation
import KSMTestSupport
import Kafka
import Licensing
import Testing
import Wire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension FleetTests {
    @Test(
        "ksm serve --tracing --otlp-endpoint: fps.license spans continue each job's trace and reach a collector through swift-otel (after a 503 retry), in protobuf (the default) or JSON; each reply names its span as parent; --log-format json writes one JSON object per line",
        arguments: ["http/protobuf", "http/json"])
    func otlpExportAndJSONLogs(encoding: String) async throws {
        let fleet = try await Fleet()
        let collector = try OTLPTestCollector(script: [.init(status: 503)])
        defer { collector.stop() }
        let adminPort = try RedisServerProcess.freeLoopbackPort()
        let worker = try await fleet.startWorker(
            extraArguments: [
                "--log-format", "json", "--log-level", "debug", "--tracing", "--otlp-endpoint", collector.tracesURL,
                "--otlp-schedule-delay-ms", "200", "--admin-port", "\(adminPort)",
            ],
            environment: ["OTEL_SERVICE_NAME": "ksm-e2e", "OTEL_EXPORTER_OTLP_HEADERS": "x-e2e=yes", "OTEL_EXPORTER_OTLP_PROTOCOL": encoding])
        let client = try await FleetClient(fleet: fleet)
        let device = SimulatedDevice(trust: client.trust)
        let traceID = "0af7651916cd43dd8448eb211c80319c"
        // Request ID -> the edge's span ID that the job names as its parent.
        let jobs = [("trace-1", "b7ad6b7169203331"), ("trace-3", "b7ad6b7169203333"), ("trace-4", "b7ad6b7169203334")]
        for (n, (id, parent)) in jobs.enumerated() {
            let (reply, _) = try await client.request(
                id: id, account: "t\(n)", device: device, session: UInt64(n + 1),
                headers: [("traceparent", Array("00-\(traceID)-\(parent)-01".utf8)), ("tracestate", Array("edge=1".utf8))])
            #expect(reply.status == .ok, "\(reply.reason)")
        }
        // A malformed traceparent: the job starts a trace of its own.
        let (plain, _) = try await client.request(id: "trace-2", account: "t9", device: device, session: 9, headers: [("traceparent", Array("junk".utf8))])
        #expect(plain.status == .ok)
        // Not a job: dead-lettered, and its span says so.
        try await client.sendRaw(Array("not json".utf8), headers: [("traceparent", Array("00-\(traceID)-b7ad6b7169203335-01".utf8))])

        // Exported on the 200 ms schedule, the first request answered 503 and retried by swift-otel.
        let requests = try await collector.wait(timeout: .seconds(30)) { (try? Self.spans(in: $0).count) == 5 }
        #expect(await worker.terminate() == 0)
        #expect(requests.count >= 2)
        let contentType = encoding == "http/json" ? "application/json" : "application/x-protobuf"
        #expect(requests.allSatisfy { $0.target == "/v1/traces" && $0.header("x-e2e") == "yes" && $0.header("content-type") == contentType })
        for request in requests {
            let root = try Self.document(request)
            let resource = try #require(root["resourceSpans"]?[0]?["resource"]?["attributes"])
            #expect(resource.attribute("service.name") == .object(["stringValue": .string("ksm-e2e")]))
            #expect(resource.attribute("telemetry.sdk.language") == .object(["stringValue": .string("swift")]))
        }
        // By span ID: the 503'd request and its retry carry the same spans.
        let spans = try Self.spans(in: requests)
        #expect(spans.count == 5)
        let replies = client.messages(on: "fps.license.replies")
        func span(of id: String) throws -> JSONValue {
            try #require(spans.values.first { $0["attributes"]?.attribute("fps.request_id") == .object(["stringValue": .string(id)]) }, "no span for \(id)")
        }
        func reply(to id: String) throws -> KafkaMessage {
            try #require(replies.first { $0.header("correlation-id") == Array(id.utf8) })
        }
        for (id, parent) in jobs {
            let span = try span(of: id)
            #expect(span["name"] == .string("fps.license"))
            #expect(span["kind"] == .integer(5))
            #expect(span["traceId"] == .string(traceID))
            #expect(span["parentSpanId"] == .string(parent))
            #expect(span["traceState"] == .string("edge=1"))
            #expect(span["attributes"]?.attribute("fps.status") == .object(["stringValue": .string("noErr")]))
            #expect(span["attributes"]?.attribute("messaging.system") == .object(["stringValue": .string("kafka")]))
            #expect(span["events"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["received", "processed", "published"])
            let start = try #require(span["startTimeUnixNano"]?.stringValue.flatMap { UInt64($0) })
            let end = try #require(span["endTimeUnixNano"]?.stringValue.flatMap { UInt64($0) })
            #expect(start <= end && end - start < 60_000_000_000)
            let spanID = try #require(span["spanId"]?.stringValue)
            #expect(try reply(to: id).header("traceparent").map { String(decoding: $0, as: UTF8.self) } == "00-\(traceID)-\(spanID)-01")
            #expect(try reply(to: id).header("tracestate") == Array("edge=1".utf8))
        }
        // The job with a malformed traceparent: a root span, and its reply carries the new trace.
        let root = try span(of: "trace-2")
        #expect(root["parentSpanId"] == nil)
        let rootTrace = try #require(root["traceId"]?.stringValue)
        #expect(rootTrace != traceID && rootTrace.count == 32)
        #expect(
            try reply(to: "trace-2").header("traceparent").map { String(decoding: $0, as: UTF8.self) }
                == "00-\(rootTrace)-\(try #require(root["spanId"]?.stringValue))-01")
        let dead = try #require(spans.values.first { $0["parentSpanId"] == .string("b7ad6b7169203335") })
        #expect(dead["status"]?["code"] == .integer(2))
        #expect(dead["traceId"] == .string(traceID))

        var requestIDs: Set<String> = []
        let lines = worker.stderr.split(separator: "\n")
        #expect(lines.count > 3)
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object != nil, "not a JSON object: \(line)")
            guard let object else { continue }
            for field in ["timestamp", "level", "label", "message"] { #expect(object[field] is String, "\(field) missing in \(line)") }
            if let id = object["request_id"] as? String {
                requestIDs.insert(id)
                #expect(object["tenant"] as? String == fleet.catalog.tenant)
                #expect(object["status"] != nil)
            }
        }
        #expect(requestIDs.isSuperset(of: ["trace-1", "trace-2"]), "\(requestIDs)")
        // The exporter's headers may carry API keys: their values never reach the log.
        #expect(worker.stderr.contains("x-e2e") && !worker.stderr.contains("yes\""))
        await client.close()
    }

    /// A request's body as OTLP JSON: parsed, or read from protobuf.
    static func document(_ request: OTLPTestCollector.Request) throws -> JSONValue {
        request.header("content-type") == "application/x-protobuf" ? try OTLPProtobufReader.request(request.body) : try JSONValue(parsing: request.body)
    }

    /// Every span in the collector's requests, by span ID, with `traceId`, `spanId` and
    /// `parentSpanId` in hex: OTLP JSON says hex, but swift-otel's JSON (SwiftProtobuf) writes IDs as base64.
    static func spans(in requests: [OTLPTestCollector.Request]) throws -> [String: JSONValue] {
        var spans: [String: JSONValue] = [:]
        for request in requests {
            let root = try document(request)
            for resource in root["resourceSpans"]?.arrayValue ?? [] {
                for scope in resource["scopeSpans"]?.arrayValue ?? [] {
                    for span in scope["spans"]?.arrayValue ?? [] {
                        guard case .object(var members) = span else { continue }
                        for key in ["traceId", "spanId", "parentSpanId"] {
                            if let id = members[key]?.stringValue { members[key] = .string(hexID(id)) }
                        }
                        if let id = members["spanId"]?.stringValue { spans[id] = .object(members) }
                    }
                }
            }
        }
        return spans
    }

    /// A trace or span ID in lowercase hex, whether written as hex or as base64.
    private static func hexID(_ id: String) -> String {
        if id.count == 32 || id.count == 16, id.allSatisfy(\.isHexDigit) { return id.lowercased() }
        guard let bytes = Data(base64Encoded: id) else { return id }
        return bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// GETs /metrics until `condition` holds (10 s at most); returns the last text.
    static func scrape(port: Int, until condition: (String) -> Bool) async throws -> String {
        let url = try #require(URL(string: "http://127.0.0.1:\(port)/metrics"))
        let deadline = ContinuousClock.now + .seconds(10)
        var text = ""
        while true {
            if let (data, _) = try? await URLSession.shared.data(from: url) {
                text = String(decoding: data, as: UTF8.self)
                if condition(text) { return text }
            }
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return text
    }
}

extension JSONValue {
    fileprivate subscript(_ key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    fileprivate subscript(_ index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    fileprivate var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    fileprivate var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }

    fileprivate func attribute(_ key: String) -> JSONValue? {
        arrayValue?.first { $0["key"]?.stringValue == key }?["value"]
    }
}
