@testable import KSMService
import Testing

@Suite struct OTLPConfigurationTests {
    private typealias Settings = OTLPTracingConfiguration.Settings

    private func resolve(flags: Settings = Settings(), _ env: [String: String] = [:], file: Settings = Settings()) throws(OTLPConfigurationError) -> OTLPTracingConfiguration? {
        try OTLPTracingConfiguration.resolve(flags: flags, environment: env, file: file, serviceInstanceID: "host-1")
    }

    @Test("Endpoints: the traces URL is used as it is, the base URL gets /v1/traces; flags beat the environment, which beats the file")
    func endpoints() throws {
        #expect(try resolve() == nil)
        #expect(try resolve(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"])?.endpoint == OTLPEndpoint(host: "collector", port: 4318, path: "/v1/traces"))
        #expect(try resolve(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"])?.endpoint.path == "/v1/traces")
        #expect(try resolve(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector/otlp"])?.endpoint == OTLPEndpoint(host: "collector", port: 80, path: "/otlp/v1/traces"))
        #expect(try resolve(["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/custom", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:1"])?.endpoint
                == OTLPEndpoint(host: "c", port: 4318, path: "/custom"))
        #expect(try resolve(["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318"])?.endpoint.path == "/")
        #expect(try resolve(flags: Settings(endpoint: "http://flag:1/v1/traces"), ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://env:2/v1/traces"])?.endpoint.host == "flag")
        #expect(try resolve(["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://env:2/v1/traces"], file: Settings(endpoint: "http://file:3/v1/traces"))?.endpoint.host == "env")
        #expect(try resolve(file: Settings(endpoint: "http://file:3/v1/traces"))?.endpoint.host == "file")
        #expect(try OTLPEndpoint(url: "http://[::1]:4318/v1/traces") == OTLPEndpoint(host: "::1", port: 4318, path: "/v1/traces"))
        #expect(try OTLPEndpoint(url: "http://[::1]:4318/v1/traces").hostHeader == "[::1]:4318")
        // A query (where some vendors put an API key) is sent, but never printed.
        let keyed = try OTLPEndpoint(url: "http://c:4318/v1/traces?api_key=s3cret")
        #expect(keyed.path == "/v1/traces?api_key=s3cret")
        #expect(keyed.description == "http://c:4318/v1/traces?...")
        #expect(try OTLPEndpoint(baseURL: "http://c:4318/otlp?api_key=s3cret").path == "/otlp/v1/traces?api_key=s3cret")
    }

    @Test("https and other bad endpoints are refused with a clear reason")
    func badEndpoints() {
        do {
            _ = try OTLPEndpoint(url: "https://collector:4318/v1/traces")
            Issue.record("https accepted")
        } catch {
            #expect(error.description.contains("https is not supported"))
            #expect(error.description.contains("Collector"))
        }
        for bad in ["collector:4318", "http://", "http://c:0/", "http://c:99999/", "http://c:x/", "http://user:pw@c:1/", "http://c:1/a b", "grpc://c:4317"] {
            #expect(throws: OTLPConfigurationError.self, "\(bad)") { _ = try OTLPEndpoint(url: bad) }
        }
    }

    @Test("Headers: k=v lists, percent-decoded, signal-specific over generic, environment over file; bad ones refused without echoing the value")
    func headers() throws {
        let configuration = try #require(try resolve([
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces",
            "OTEL_EXPORTER_OTLP_HEADERS": " api-key = abc%20def , X-Scope=one",
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-scope=two",
        ], file: Settings(headers: ["API-KEY": "from-file", "x-file": "f"])))
        let headers = Dictionary(uniqueKeysWithValues: configuration.headers.map { ($0.name.lowercased(), $0.value) })
        #expect(headers == ["api-key": "abc def", "x-scope": "two", "x-file": "f"])
        #expect(!configuration.summary.contains("abc"))
        #expect(configuration.summary.contains("api-key"))
        for (list, message) in [("novalue", "member 1 is not key=value"), ("a=%zz", "invalid percent-encoding"), ("a b=1", "not a valid HTTP field name"),
                                ("x=ok%0D%0Ainjected: 1", "control character"), ("content-length=5", "set by the exporter")] {
            do {
                _ = try resolve(["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:1/", "OTEL_EXPORTER_OTLP_HEADERS": list])
                Issue.record("accepted \(list)")
            } catch {
                #expect(error.description.contains(message), "\(error)")
                #expect(!error.description.contains("injected"))
            }
        }
    }

    @Test("Sampling: OTEL_TRACES_SAMPLER_ARG is the root ratio (default 1); parent-based samplers only; out-of-range refused")
    func sampling() throws {
        let endpoint = ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:1/"]
        #expect(try resolve(endpoint)?.sampler.rootRatio == 1)
        #expect(try resolve(endpoint.merging(["OTEL_TRACES_SAMPLER_ARG": "0.25"]) { $1 })?.sampler.rootRatio == 0.25)
        #expect(try resolve(endpoint.merging(["OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.5"]) { $1 })?.sampler.rootRatio == 0.5)
        #expect(try resolve(endpoint.merging(["OTEL_TRACES_SAMPLER": "parentbased_always_off", "OTEL_TRACES_SAMPLER_ARG": "0.5"]) { $1 })?.sampler.rootRatio == 0)
        #expect(try resolve(flags: Settings(sampleRatio: 0.1), endpoint.merging(["OTEL_TRACES_SAMPLER_ARG": "0.5"]) { $1 })?.sampler.rootRatio == 0.1)
        #expect(try resolve(endpoint, file: Settings(sampleRatio: 0.3))?.sampler.rootRatio == 0.3)
        for env in [["OTEL_TRACES_SAMPLER_ARG": "2"], ["OTEL_TRACES_SAMPLER_ARG": "half"], ["OTEL_TRACES_SAMPLER": "always_on"]] {
            #expect(throws: OTLPConfigurationError.self, "\(env)") { _ = try resolve(endpoint.merging(env) { $1 }) }
        }
        #expect(throws: OTLPConfigurationError.self) { _ = try resolve(flags: Settings(sampleRatio: -0.1), endpoint) }
    }

    @Test("Service name, resource attributes, timeouts, batch settings, and the switches that turn export off")
    func everythingElse() throws {
        let endpoint = ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:1/"]
        let defaults = try #require(try resolve(endpoint))
        #expect(defaults.serviceName == "ksm")
        #expect(defaults.batch == BatchSpanProcessorConfiguration())
        #expect(defaults.batch.scheduleDelay == .seconds(5) && defaults.batch.maximumQueueSize == 2048 && defaults.batch.maximumExportBatchSize == 512)
        #expect(defaults.batch.exportTimeout == .seconds(10))
        #expect(defaults.resource.get("service.instance.id") == .string("host-1"))
        let tuned = try #require(try resolve(flags: Settings(scheduleDelayMilliseconds: 150), endpoint.merging([
            "OTEL_SERVICE_NAME": "ksm-eu", "OTEL_RESOURCE_ATTRIBUTES": "service.name=ignored,deployment.environment=prod,region=eu%2D1",
            "OTEL_EXPORTER_OTLP_TIMEOUT": "2500", "OTEL_BSP_SCHEDULE_DELAY": "900", "OTEL_BSP_MAX_QUEUE_SIZE": "100",
            "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "50", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        ]) { $1 }))
        #expect(tuned.serviceName == "ksm-eu")
        #expect(tuned.resource.get("service.name") == .string("ksm-eu"))
        #expect(tuned.resource.get("region") == .string("eu-1"))
        #expect(tuned.batch.exportTimeout == .milliseconds(2500))
        #expect(tuned.batch.scheduleDelay == .milliseconds(150))
        #expect(tuned.batch.maximumQueueSize == 100 && tuned.batch.maximumExportBatchSize == 50)
        #expect(try resolve(endpoint.merging(["OTEL_RESOURCE_ATTRIBUTES": "service.name=from-resource"]) { $1 })?.serviceName == "from-resource")
        #expect(try resolve(endpoint.merging(["OTEL_SDK_DISABLED": "true"]) { $1 }) == nil)
        #expect(try resolve(endpoint.merging(["OTEL_TRACES_EXPORTER": "none"]) { $1 }) == nil)
        for env in [["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"], ["OTEL_TRACES_EXPORTER": "zipkin"], ["OTEL_EXPORTER_OTLP_TIMEOUT": "0"],
                    ["OTEL_BSP_MAX_QUEUE_SIZE": "10", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "20"]] {
            #expect(throws: OTLPConfigurationError.self, "\(env)") { _ = try resolve(endpoint.merging(env) { $1 }) }
        }
    }
}

@Suite struct HTTPResponseTests {
    private func parse(_ text: String, atEOF: Bool = false) -> HTTPResponse.Parse {
        HTTPResponse.parse(Array(text.utf8)[...], atEOF: atEOF)
    }

    @Test("Content-Length, chunked, read-to-close and interim 100 responses; incomplete is not malformed")
    func parsing() {
        guard case .complete(let plain) = parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nRetry-After: 3\r\n\r\n{}") else { Issue.record("plain"); return }
        #expect(plain.status == 200 && plain.body == Array("{}".utf8) && plain.header("retry-after") == "3")
        guard case .incomplete = parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{}") else { Issue.record("short body"); return }
        guard case .malformed = parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{}", atEOF: true) else { Issue.record("closed early"); return }
        guard case .incomplete = parse("HTTP/1.1 200 OK\r\nContent-") else { Issue.record("partial head"); return }
        guard case .complete(let chunked) = parse("HTTP/1.1 503 Busy\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\n\r\n") else {
            Issue.record("chunked"); return
        }
        #expect(chunked.status == 503 && chunked.body == Array("abcde".utf8))
        guard case .incomplete = parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab") else { Issue.record("partial chunk"); return }
        guard case .complete(let interim) = parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n") else { Issue.record("interim"); return }
        #expect(interim.status == 204)
        guard case .complete(let toClose) = parse("HTTP/1.0 200 OK\r\n\r\nall of it", atEOF: true) else { Issue.record("to close"); return }
        #expect(toClose.body == Array("all of it".utf8))
        for bad in ["SMTP ready\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
                    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"] {
            guard case .malformed = parse(bad) else { Issue.record("accepted \(bad)"); continue }
        }
    }
}
