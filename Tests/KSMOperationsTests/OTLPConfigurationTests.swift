import Logging
import OTel
import Testing

@testable import KSMOperations
@testable import KSMService

@Suite struct OTLPConfigurationTests {
    private typealias Settings = OTLPTracingConfiguration.Settings

    private func resolve(flags: Settings = Settings(), _ env: [String: String] = [:], file: Settings = Settings()) throws(OTLPConfigurationError)
        -> OTLPTracingConfiguration?
    {
        try OTLPTracingConfiguration.resolve(flags: flags, environment: env, file: file, serviceInstanceID: "host-1")
    }

    @Test("Endpoints: the traces URL is used as it is, the base URL gets /v1/traces; flags beat the environment, which beats the file")
    func endpoints() throws {
        #expect(try resolve() == nil)
        #expect(try resolve(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"])?.endpoint == "http://collector:4318/v1/traces")
        #expect(try resolve(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"])?.endpoint == "http://collector:4318/v1/traces")
        #expect(try resolve(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector/otlp"])?.endpoint == "http://collector/otlp/v1/traces")
        #expect(
            try resolve(["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/custom", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:1"])?.endpoint
                == "http://c:4318/custom")
        #expect(
            try resolve(flags: Settings(endpoint: "http://flag:1/v1/traces"), ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://env:2/v1/traces"])?.endpoint
                == "http://flag:1/v1/traces")
        #expect(
            try resolve(["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://env:2/v1/traces"], file: Settings(endpoint: "http://file:3/v1/traces"))?.endpoint
                == "http://env:2/v1/traces")
        #expect(try resolve(file: Settings(endpoint: "http://file:3/v1/traces"))?.endpoint == "http://file:3/v1/traces")
        // swift-otel exports over https too (AsyncHTTPClient with NIOSSL).
        #expect(try resolve(flags: Settings(endpoint: "https://collector:4318/v1/traces"))?.endpoint == "https://collector:4318/v1/traces")
        #expect(try resolve(flags: Settings(endpoint: "http://[::1]:4318/v1/traces"))?.endpoint == "http://[::1]:4318/v1/traces")
        // A query (where some vendors put an API key) is sent, but never printed.
        let keyed = try #require(try resolve(flags: Settings(endpoint: "http://c:4318/v1/traces?api_key=s3cret")))
        #expect(keyed.endpoint == "http://c:4318/v1/traces?api_key=s3cret")
        #expect(keyed.summary.contains("http://c:4318/v1/traces?...") && !keyed.summary.contains("s3cret"))
    }

    @Test("Endpoints that are not http(s) URLs with a host are refused, the setting named and the URL not echoed")
    func badEndpoints() {
        for bad in ["collector:4318", "http://", "http:///v1/traces", "http://c:1/a b", "grpc://c:4317"] {
            do {
                _ = try resolve(flags: Settings(endpoint: bad))
                Issue.record("accepted \(bad)")
            } catch {
                #expect(error.description.contains("--otlp-endpoint"), "\(error)")
            }
        }
    }

    @Test("Headers: k=v lists, percent-decoded, signal-specific over generic, environment over file; bad ones refused without echoing the value")
    func headers() throws {
        let configuration = try #require(
            try resolve(
                [
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces",
                    "OTEL_EXPORTER_OTLP_HEADERS": " api-key = abc%20def , X-Scope=one",
                    "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-scope=two",
                ], file: Settings(headers: ["API-KEY": "from-file", "x-file": "f"])))
        let headers = Dictionary(uniqueKeysWithValues: configuration.headers.map { ($0.name.lowercased(), $0.value) })
        #expect(headers == ["api-key": "abc def", "x-scope": "two", "x-file": "f"])
        #expect(!configuration.summary.contains("abc"))
        #expect(configuration.summary.contains("api-key"))
        for (list, message) in [
            ("novalue", "member 1 is not key=value"), ("a=%zz", "invalid percent-encoding"), ("a b=1", "not a valid HTTP field name"),
            ("x=ok%0D%0Ainjected: 1", "control character"), ("content-length=5", "set by the exporter"),
        ] {
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
        #expect(try resolve(endpoint)?.rootSampleRatio == 1)
        #expect(try resolve(endpoint.merging(["OTEL_TRACES_SAMPLER_ARG": "0.25"]) { $1 })?.rootSampleRatio == 0.25)
        #expect(
            try resolve(endpoint.merging(["OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.5"]) { $1 })?.rootSampleRatio == 0.5)
        #expect(
            try resolve(endpoint.merging(["OTEL_TRACES_SAMPLER": "parentbased_always_off", "OTEL_TRACES_SAMPLER_ARG": "0.5"]) { $1 })?.rootSampleRatio == 0)
        #expect(try resolve(flags: Settings(sampleRatio: 0.1), endpoint.merging(["OTEL_TRACES_SAMPLER_ARG": "0.5"]) { $1 })?.rootSampleRatio == 0.1)
        #expect(try resolve(endpoint, file: Settings(sampleRatio: 0.3))?.rootSampleRatio == 0.3)
        for env in [["OTEL_TRACES_SAMPLER_ARG": "2"], ["OTEL_TRACES_SAMPLER_ARG": "half"], ["OTEL_TRACES_SAMPLER": "always_on"]] {
            #expect(throws: OTLPConfigurationError.self, "\(env)") { _ = try resolve(endpoint.merging(env) { $1 }) }
        }
        #expect(throws: OTLPConfigurationError.self) { _ = try resolve(flags: Settings(sampleRatio: -0.1), endpoint) }
    }

    @Test("Service name, resource attributes, timeouts, batch settings, protocol, and the switches that turn export off")
    func everythingElse() throws {
        let endpoint = ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:1/"]
        let defaults = try #require(try resolve(endpoint))
        #expect(defaults.serviceName == "ksm")
        #expect(defaults.wireProtocol == .httpProtobuf)
        #expect(defaults.scheduleDelay == .seconds(5) && defaults.maximumQueueSize == 2048 && defaults.maximumExportBatchSize == 512)
        #expect(defaults.exportTimeout == .seconds(10))
        #expect(defaults.serviceInstanceID == "host-1")
        let tuned = try #require(
            try resolve(
                flags: Settings(scheduleDelayMilliseconds: 150),
                endpoint.merging([
                    "OTEL_SERVICE_NAME": "ksm-eu", "OTEL_RESOURCE_ATTRIBUTES": "service.name=ignored,deployment.environment=prod,region=eu%2D1",
                    "OTEL_EXPORTER_OTLP_TIMEOUT": "2500", "OTEL_BSP_SCHEDULE_DELAY": "900", "OTEL_BSP_MAX_QUEUE_SIZE": "100",
                    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "50", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
                ]) { $1 }))
        #expect(tuned.serviceName == "ksm-eu")
        #expect(tuned.resourceAttributes["region"] == "eu-1")
        #expect(tuned.exportTimeout == .milliseconds(2500))
        #expect(tuned.scheduleDelay == .milliseconds(150))
        #expect(tuned.maximumQueueSize == 100 && tuned.maximumExportBatchSize == 50)
        #expect(tuned.wireProtocol == .httpJSON)
        #expect(try resolve(endpoint.merging(["OTEL_RESOURCE_ATTRIBUTES": "service.name=from-resource"]) { $1 })?.serviceName == "from-resource")
        #expect(try resolve(endpoint.merging(["OTEL_SDK_DISABLED": "true"]) { $1 }) == nil)
        #expect(try resolve(endpoint.merging(["OTEL_TRACES_EXPORTER": "none"]) { $1 }) == nil)
        for env in [
            ["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"], ["OTEL_TRACES_EXPORTER": "zipkin"], ["OTEL_EXPORTER_OTLP_TIMEOUT": "0"],
            ["OTEL_BSP_MAX_QUEUE_SIZE": "10", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "20"],
        ] {
            #expect(throws: OTLPConfigurationError.self, "\(env)") { _ = try resolve(endpoint.merging(env) { $1 }) }
        }
    }

    @Test("Every setting reaches swift-otel's configuration: traces only, W3C propagation, parent-based ratio sampling")
    func otelConfiguration() throws {
        let env = [
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://c:4318/v1/traces", "OTEL_EXPORTER_OTLP_HEADERS": "api-key=k",
            "OTEL_TRACES_SAMPLER_ARG": "0.25", "OTEL_EXPORTER_OTLP_TIMEOUT": "2500", "OTEL_BSP_SCHEDULE_DELAY": "900",
            "OTEL_BSP_MAX_QUEUE_SIZE": "100", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "50",
        ]
        let otel = try #require(try resolve(env)).otelConfiguration(logger: Logger(label: "test"))
        #expect(otel.traces.enabled && !otel.metrics.enabled && !otel.logs.enabled)
        #expect(otel.traces.otlpExporter.endpoint == "https://c:4318/v1/traces")
        #expect(otel.traces.otlpExporter.headers.map(\.0) == ["api-key"])
        #expect(otel.traces.otlpExporter.timeout == .milliseconds(2500))
        #expect(otel.traces.batchSpanProcessor.exportTimeout == .milliseconds(2500))
        #expect(otel.traces.batchSpanProcessor.scheduleDelay == .milliseconds(900))
        #expect(otel.traces.batchSpanProcessor.maxQueueSize == 100 && otel.traces.batchSpanProcessor.maxExportBatchSize == 50)
        #expect(otel.resourceAttributes["service.instance.id"] == "host-1")
        // Only TLS and compression variables are left for swift-otel to read: the rest were resolved above.
        #expect(
            OTLPTracingConfiguration.environmentForOTel(env.merging(["OTEL_EXPORTER_OTLP_CERTIFICATE": "/ca.pem", "HOME": "/root"]) { $1 })
                == ["OTEL_EXPORTER_OTLP_CERTIFICATE": "/ca.pem"])
    }
}
