import Logging
import OTel
import Tracing

@testable import KSMOperations
@testable import KSMService

enum TracingFixtures {
    static let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let parentSpanID = "00f067aa0ba902b7"
    static let traceparent = "00-\(traceID)-\(parentSpanID)-01"

    /// swift-otel's tracer as `ksm serve` configures it, with `rootSampleRatio` for root spans. Its
    /// export service is never run: these tests look at sampling and propagation, not at export
    /// (the fleet test runs export against a collector).
    static func tracer(rootSampleRatio: Double = 1) throws -> any Tracer {
        var configuration = OTLPTracingConfiguration(endpoint: "http://127.0.0.1:9/v1/traces", serviceInstanceID: "test")
        configuration.rootSampleRatio = rootSampleRatio
        return try OTel.makeTracingBackend(configuration: configuration.otelConfiguration(logger: Logger(label: "test"))).factory
    }
}
