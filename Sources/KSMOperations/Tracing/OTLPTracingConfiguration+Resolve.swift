import KSMService

extension OTLPTracingConfiguration {
    /// One layer of settings, from flags or from the config file; nil means "not set here".
    package struct Settings: Sendable {
        /// Signal-specific: used as it is (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` semantics).
        package var endpoint: String?
        package var headers: [String: String]?
        package var timeoutMilliseconds: Int?
        package var scheduleDelayMilliseconds: Int?
        package var sampleRatio: Double?
        package var serviceName: String?

        package init(
            endpoint: String? = nil, headers: [String: String]? = nil, timeoutMilliseconds: Int? = nil,
            scheduleDelayMilliseconds: Int? = nil, sampleRatio: Double? = nil, serviceName: String? = nil
        ) {
            self.endpoint = endpoint
            self.headers = headers
            self.timeoutMilliseconds = timeoutMilliseconds
            self.scheduleDelayMilliseconds = scheduleDelayMilliseconds
            self.sampleRatio = sampleRatio
            self.serviceName = serviceName
        }
    }

    /// Header names the exporter (swift-otel over AsyncHTTPClient) writes itself.
    static let reservedHeaders: Set<String> = ["host", "content-length", "content-type", "transfer-encoding", "connection", "user-agent"]

    /// Combines flags, the environment and the config file (flags win, then the environment, then
    /// the file, as everywhere in `ksm serve`). Returns nil when no endpoint is set anywhere, or
    /// when `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.
    ///
    /// Environment variables read (OpenTelemetry SDK names): `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (as
    /// it is), else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`; `OTEL_EXPORTER_OTLP_HEADERS` and
    /// `OTEL_EXPORTER_OTLP_TRACES_HEADERS` (`k=v,k2=v2`, values percent-decoded);
    /// `OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT` (ms); `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL` (`http/protobuf`,
    /// the default, or `http/json`; `grpc` is refused: swift-otel is built without its gRPC exporter);
    /// `OTEL_SERVICE_NAME`; `OTEL_RESOURCE_ATTRIBUTES`; `OTEL_TRACES_SAMPLER`
    /// (`parentbased_traceidratio`, the default here, `parentbased_always_on`, `parentbased_always_off`)
    /// and `OTEL_TRACES_SAMPLER_ARG` (the root ratio, 0...1, default 1); `OTEL_BSP_SCHEDULE_DELAY`,
    /// `OTEL_BSP_MAX_QUEUE_SIZE`, `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`, `OTEL_TRACES_EXPORTER`, `OTEL_SDK_DISABLED`.
    package static func resolve(
        flags: Settings, environment env: [String: String], file: Settings,
        serviceInstanceID: String
    ) throws(OTLPConfigurationError) -> OTLPTracingConfiguration? {
        func value(_ name: String) -> String? {
            guard let text = env[name]?.trimmingWhiteSpace, !text.isEmpty else { return nil }
            return text
        }
        if value("OTEL_SDK_DISABLED")?.lowercased() == "true" { return nil }
        if let exporter = value("OTEL_TRACES_EXPORTER")?.lowercased() {
            if exporter == "none" { return nil }
            guard exporter.split(separator: ",").contains(where: { $0.trimmingWhiteSpace == "otlp" }) else {
                throw OTLPConfigurationError("OTEL_TRACES_EXPORTER=\(exporter): only otlp (or none) is supported")
            }
        }
        var wireProtocol = WireProtocol.httpProtobuf
        for name in ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"] {
            guard let proto = value(name)?.lowercased() else { continue }
            guard let known = WireProtocol(rawValue: proto) else {
                throw OTLPConfigurationError(
                    "\(name)=\(proto): this worker exports OTLP/HTTP (http/protobuf or http/json); use the collector's OTLP/HTTP receiver (port 4318), not gRPC"
                )
            }
            wireProtocol = known
            break
        }

        let endpoint: String
        if let url = flags.endpoint {
            endpoint = try checkedEndpoint(url, name: "--otlp-endpoint")
        } else if let url = value("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            endpoint = try checkedEndpoint(url, name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        } else if let url = value("OTEL_EXPORTER_OTLP_ENDPOINT") {
            // The base URL of every signal: traces go to its /v1/traces (OpenTelemetry's rule).
            let base = try checkedEndpoint(url, name: "OTEL_EXPORTER_OTLP_ENDPOINT")
            endpoint = (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/v1/traces"
        } else if let url = file.endpoint {
            endpoint = try checkedEndpoint(url, name: "otlp-endpoint")
        } else {
            return nil
        }
        var configuration = OTLPTracingConfiguration(endpoint: endpoint, serviceInstanceID: serviceInstanceID)
        configuration.wireProtocol = wireProtocol

        // Lowest layer first; names compare case-insensitively, the last layer's spelling is kept.
        var headers: [String: (name: String, value: String)] = [:]
        for (name, headerValue) in file.headers ?? [:] { headers[name.lowercased()] = (name, headerValue) }
        for variable in ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"] {
            guard let text = value(variable) else { continue }
            for (name, headerValue) in try parseList(text, name: variable) { headers[name.lowercased()] = (name, headerValue) }
        }
        for (name, headerValue) in flags.headers ?? [:] { headers[name.lowercased()] = (name, headerValue) }
        for (_, header) in headers { try validateHeader(name: header.name, value: header.value) }
        configuration.headers = headers.sorted { $0.key < $1.key }.map(\.value)

        func milliseconds(_ flag: Int?, _ names: [String], _ fileValue: Int?, what: String) throws(OTLPConfigurationError) -> Int? {
            if let flag {
                guard flag > 0 else { throw OTLPConfigurationError("\(what) must be a positive number of milliseconds") }
                return flag
            }
            for name in names {
                guard let text = value(name) else { continue }
                guard let ms = Int(text), ms > 0 else { throw OTLPConfigurationError("\(name) must be a positive number of milliseconds") }
                return ms
            }
            if let fileValue {
                guard fileValue > 0 else { throw OTLPConfigurationError("\(what) must be a positive number of milliseconds") }
                return fileValue
            }
            return nil
        }
        if let ms = try milliseconds(
            flags.timeoutMilliseconds, ["OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"],
            file.timeoutMilliseconds, what: "--otlp-timeout-ms")
        {
            configuration.exportTimeout = .milliseconds(ms)
        }
        if let ms = try milliseconds(
            flags.scheduleDelayMilliseconds, ["OTEL_BSP_SCHEDULE_DELAY"], file.scheduleDelayMilliseconds,
            what: "--otlp-schedule-delay-ms")
        {
            configuration.scheduleDelay = .milliseconds(ms)
        }
        if let queue = try milliseconds(nil, ["OTEL_BSP_MAX_QUEUE_SIZE"], nil, what: "OTEL_BSP_MAX_QUEUE_SIZE") {
            configuration.maximumQueueSize = queue
        }
        if let size = try milliseconds(nil, ["OTEL_BSP_MAX_EXPORT_BATCH_SIZE"], nil, what: "OTEL_BSP_MAX_EXPORT_BATCH_SIZE") {
            guard size <= configuration.maximumQueueSize else {
                throw OTLPConfigurationError("OTEL_BSP_MAX_EXPORT_BATCH_SIZE (\(size)) must not exceed the queue size (\(configuration.maximumQueueSize))")
            }
            configuration.maximumExportBatchSize = size
        }

        configuration.rootSampleRatio = try sampleRatio(flag: flags.sampleRatio, value: value, file: file.sampleRatio)

        if let text = value("OTEL_RESOURCE_ATTRIBUTES") {
            for (key, attribute) in try parseList(text, name: "OTEL_RESOURCE_ATTRIBUTES") { configuration.resourceAttributes[key] = attribute }
        }
        configuration.serviceName =
            flags.serviceName ?? value("OTEL_SERVICE_NAME") ?? file.serviceName
            ?? configuration.resourceAttributes["service.name"] ?? configuration.serviceName
        return configuration
    }

    /// The root sampling ratio: the flag, else `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG`, else
    /// the file, else 1.
    private static func sampleRatio(flag: Double?, value: (String) -> String?, file: Double?) throws(OTLPConfigurationError) -> Double {
        func checked(_ ratio: Double, _ what: String) throws(OTLPConfigurationError) -> Double {
            guard ratio.isFinite, (0...1).contains(ratio) else { throw OTLPConfigurationError("\(what) must be a number from 0 to 1") }
            return ratio
        }
        if let flag { return try checked(flag, "--trace-sample-ratio") }
        let argument = try value("OTEL_TRACES_SAMPLER_ARG").map { (text: String) throws(OTLPConfigurationError) -> Double in
            guard let ratio = Double(text) else { throw OTLPConfigurationError("OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1") }
            return try checked(ratio, "OTEL_TRACES_SAMPLER_ARG")
        }
        switch value("OTEL_TRACES_SAMPLER")?.lowercased() {
        case nil, "parentbased_traceidratio":
            if let argument { return argument }
        case "parentbased_always_on": return 1
        case "parentbased_always_off": return 0
        case let other?:
            throw OTLPConfigurationError(
                "OTEL_TRACES_SAMPLER=\(other): this tracer is parent-based; use parentbased_traceidratio "
                    + "(with OTEL_TRACES_SAMPLER_ARG), parentbased_always_on or parentbased_always_off")
        }
        if let file { return try checked(file, "trace-sample-ratio") }
        return 1
    }

    /// `key=value,key2=value2` (W3C Baggage syntax, as OpenTelemetry uses for headers and resource
    /// attributes): spaces around members are dropped and values are percent-decoded. An error
    /// names the variable and the member's position, never its value.
    static func parseList(_ text: String, name: String) throws(OTLPConfigurationError) -> [(String, String)] {
        var out: [(String, String)] = []
        for (position, member) in text.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            let trimmed = member.trimmingWhiteSpace
            if trimmed.isEmpty { continue }
            guard let eq = trimmed.firstIndex(of: "="), eq != trimmed.startIndex else {
                throw OTLPConfigurationError("\(name): member \(position + 1) is not key=value")
            }
            let key = trimmed[..<eq].trimmingWhiteSpace
            guard !key.isEmpty, let decoded = percentDecoded(trimmed[trimmed.index(after: eq)...].trimmingWhiteSpace) else {
                throw OTLPConfigurationError("\(name): member \(position + 1) has an invalid percent-encoding")
            }
            out.append((key, decoded))
        }
        return out
    }

    private static func percentDecoded(_ text: String) -> String? {
        guard text.contains("%") else { return text }
        var bytes: [UInt8] = []
        var utf8 = text.utf8[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
            utf8 = utf8.dropFirst(2)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// An absolute http or https URL with a host; the error names the setting, never the URL (its
    /// query may hold an API key).
    static func checkedEndpoint(_ url: String, name: String) throws(OTLPConfigurationError) -> String {
        let lowered = url.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lowered.hasPrefix($0) }) else {
            throw OTLPConfigurationError("\(name) must be an http:// or https:// URL")
        }
        let rest = url.dropFirst(scheme.count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains(" "), !authority.hasPrefix(":") else {
            throw OTLPConfigurationError("\(name) must name a host, as in http://collector:4318/v1/traces")
        }
        guard url.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else {
            throw OTLPConfigurationError("\(name) holds a space or control character")
        }
        return url
    }

    /// An HTTP field name is a token (RFC 9110, 5.1); a value holds no CR, LF, NUL or other control
    /// character (5.5), so a header cannot inject another. The exporter's own headers are refused.
    static func validateHeader(name: String, value: String) throws(OTLPConfigurationError) {
        let tokenSymbols = Set("!#$%&'*+-.^_`|~".utf8)
        guard !name.isEmpty,
            name.utf8.allSatisfy({ $0 < 0x80 && (($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A || (0x30...0x39).contains($0) || tokenSymbols.contains($0)) })
        else {
            throw OTLPConfigurationError("OTLP header name \"\(name)\" is not a valid HTTP field name")
        }
        guard !reservedHeaders.contains(name.lowercased()) else {
            throw OTLPConfigurationError("OTLP header \(name) is set by the exporter itself")
        }
        guard value.utf8.allSatisfy({ $0 == 0x09 || $0 >= 0x20 && $0 != 0x7F }) else {
            throw OTLPConfigurationError("OTLP header \(name): the value holds a control character")
        }
    }
}
