import KSMService
import Logging

/// Logs, the admin port with its metrics, and tracing with span export.
extension ServeConfigurationResolver {
    mutating func resolveObservability(_ configuration: inout ServeConfiguration, defaultInstanceID: String) {
        configuration.logLevel = Logger.Level(rawValue: choice(.logLevel)) ?? configuration.logLevel
        configuration.logFormat = LogFormat(rawValue: choice(.logFormat)) ?? configuration.logFormat
        configuration.adminPort = integer(.adminPort)
        configuration.slotCountInterval = duration(.slotCountInterval)
        configuration.worker.tenantLabelLimit = integer(.tenantLabelLimit) ?? configuration.worker.tenantLabelLimit
        configuration.worker.tracing = boolean(.tracing)
        resolveTracing(&configuration, defaultInstanceID: defaultInstanceID)
    }

    /// The OTLP exporter: checked here like every setting, then handed to ``OTLPTracingConfiguration``,
    /// which also reads the OpenTelemetry SDK's other variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, ...)
    /// and applies the defaults: only values given by flag or file are passed as its first layer, and
    /// the exporter's settings are read (and shown by `--check-config`) only when given.
    private mutating func resolveTracing(_ configuration: inout ServeConfiguration, defaultInstanceID: String) {
        func flagOrFile<T>(_ setting: ServeSetting, _ value: T?) -> T? {
            guard let from = sources.source(of: setting), from != setting.environment else { return nil }
            return value
        }
        func milliseconds(_ duration: Duration) -> Int { Int(duration / .milliseconds(1)) }
        func given(_ setting: ServeSetting) -> Bool { sources.source(of: setting) != nil }
        let endpoint = string(.otlpEndpoint)
        let headers = map(.otlpHeaders, environment: .reportedOnly)
        let layer = OTLPTracingConfiguration.Settings(
            endpoint: flagOrFile(.otlpEndpoint, endpoint),
            headers: headers.isEmpty ? nil : headers,
            timeoutMilliseconds: given(.otlpTimeout) ? flagOrFile(.otlpTimeout, milliseconds(duration(.otlpTimeout))) : nil,
            scheduleDelayMilliseconds: given(.otlpScheduleDelay)
                ? flagOrFile(.otlpScheduleDelay, milliseconds(duration(.otlpScheduleDelay))) : nil,
            sampleRatio: given(.traceSampleRatio) ? flagOrFile(.traceSampleRatio, number(.traceSampleRatio)) : nil,
            serviceName: given(.serviceName) ? flagOrFile(.serviceName, string(.serviceName)) : nil)
        do {
            // The layers are already merged above; the environment is passed for the SDK's other variables.
            let otlp = try OTLPTracingConfiguration.resolve(
                flags: layer, environment: sources.environment, file: .init(),
                serviceInstanceID: configuration.worker.instanceID ?? defaultInstanceID)
            if configuration.worker.tracing { configuration.otlp = otlp } else { configuration.otlpWithoutTracing = otlp != nil }
        } catch {
            problem(.invalidValue, "tracing", "Tracing: \(error.description).")
        }
    }
}
