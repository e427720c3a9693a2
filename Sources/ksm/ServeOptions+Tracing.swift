import ArgumentParser
import Foundation
import KSMService

extension ServeOptions {
    /// The OTLP exporter's settings from the flags, the OpenTelemetry environment variables and the
    /// config file (`otlp-endpoint`, `otlp-headers` as an object, `otlp-schedule-delay-ms`,
    /// `otlp-timeout-ms`, `trace-sample-ratio`, `service-name`). Export needs `--tracing` too: the
    /// flag turns spans on, the endpoint says where they go.
    func resolveTracing(_ settings: inout Settings, environment env: [String: String], file: [String: Any]) throws {
        func number(_ key: String) -> Double? { (file[key] as? Double) ?? (file[key] as? Int).map(Double.init) }
        let flags = OTLPTracingConfiguration.Settings(
            endpoint: otlpEndpoint, timeoutMilliseconds: otlpTimeoutMs, scheduleDelayMilliseconds: otlpScheduleDelayMs,
            sampleRatio: traceSampleRatio)
        let fileSettings = OTLPTracingConfiguration.Settings(
            endpoint: file["otlp-endpoint"] as? String, headers: file["otlp-headers"] as? [String: String],
            timeoutMilliseconds: file["otlp-timeout-ms"] as? Int, scheduleDelayMilliseconds: file["otlp-schedule-delay-ms"] as? Int,
            sampleRatio: number("trace-sample-ratio"), serviceName: file["service-name"] as? String)
        let otlp: OTLPTracingConfiguration?
        do {
            otlp = try OTLPTracingConfiguration.resolve(flags: flags, environment: env, file: fileSettings,
                                                        serviceInstanceID: settings.worker.instanceID ?? Self.defaultInstanceID())
        } catch {
            throw ValidationError(error.description)
        }
        if settings.worker.tracing {
            settings.otlp = otlp
        } else {
            settings.otlpWithoutTracing = otlp != nil
        }
    }

    /// `host-pid`: unique per running worker when no static-membership instance ID names it.
    static func defaultInstanceID() -> String {
        let host = ProcessInfo.processInfo.hostName
        return "\(host)-\(getpid())"
    }
}
