import Licensing
import Tracing

/// Spans to an OTLP/JSON `ExportTraceServiceRequest` (opentelemetry-proto's protobuf JSON mapping
/// with OTLP's exceptions), through the project's byte-level ``JSONWriter``:
///
/// - `traceId`, `spanId`, `parentSpanId` are lowercase hex strings, not base64 (OTLP's explicit
///   exception to the protobuf JSON mapping);
/// - enums are integers: `kind` (SPAN_KIND_INTERNAL 1, SERVER 2, CLIENT 3, PRODUCER 4, CONSUMER 5),
///   `status.code` (UNSET 0, OK 1, ERROR 2);
/// - 64-bit integers are decimal strings: `startTimeUnixNano`, `endTimeUnixNano`, event
///   `timeUnixNano`, `intValue`; `flags` (fixed32) and the dropped counts (uint32) are numbers;
/// - field names are lowerCamelCase; fields at their default are left out.
///
/// The JSON writer sorts object keys; OTLP receivers do not care about key order.
public struct OTLPTraceEncoder: Sendable {
    /// Resource attributes (`service.name`, `service.instance.id`, `telemetry.sdk.*`, ...).
    public var resource: SpanAttributes
    /// The instrumentation scope: who made the spans.
    public var scopeName: String
    public var scopeVersion: String

    public init(resource: SpanAttributes, scopeName: String, scopeVersion: String) {
        self.resource = resource
        self.scopeName = scopeName
        self.scopeVersion = scopeVersion
    }

    /// One request holding every span, under one resource and one scope.
    public func encode(_ spans: [RecordedSpan]) -> [UInt8] {
        let request: JSONValue = .object([
            "resourceSpans": .array([.object([
                "resource": .object(["attributes": Self.attributes(resource)]),
                "scopeSpans": .array([.object([
                    "scope": .object(["name": .string(scopeName), "version": .string(scopeVersion)]),
                    "spans": .array(spans.map(Self.span)),
                ])]),
            ])]),
        ])
        var writer = JSONWriter(reservingCapacity: 256 + spans.count * 1024)
        writer.write(request)
        return writer.bytes
    }

    static func span(_ span: RecordedSpan) -> JSONValue {
        var fields: [String: JSONValue] = [
            "traceId": .string(span.context.traceID.hexString),
            "spanId": .string(span.context.spanID.hexString),
            "name": .string(span.name),
            "kind": .integer(kind(span.kind)),
            "startTimeUnixNano": .string(String(span.startNanoseconds)),
            "endTimeUnixNano": .string(String(span.endNanoseconds)),
            "flags": .integer(Int64(flags(sampled: span.context.isSampled, remoteParent: span.parentIsRemote))),
        ]
        if let parent = span.parentSpanID { fields["parentSpanId"] = .string(parent.hexString) }
        if let state = span.context.traceState, !state.isEmpty { fields["traceState"] = .string(state) }
        if !span.attributes.isEmpty { fields["attributes"] = attributes(span.attributes) }
        if !span.events.isEmpty { fields["events"] = .array(span.events.map(event)) }
        if !span.links.isEmpty { fields["links"] = .array(span.links.map(link)) }
        if span.droppedAttributes > 0 { fields["droppedAttributesCount"] = .integer(Int64(span.droppedAttributes)) }
        if span.droppedEvents > 0 { fields["droppedEventsCount"] = .integer(Int64(span.droppedEvents)) }
        if span.droppedLinks > 0 { fields["droppedLinksCount"] = .integer(Int64(span.droppedLinks)) }
        if let status = span.status {
            var statusFields: [String: JSONValue] = ["code": .integer(status.code == .ok ? 1 : 2)]
            if status.code == .error, let message = status.message, !message.isEmpty { statusFields["message"] = .string(message) }
            fields["status"] = .object(statusFields)
        }
        return .object(fields)
    }

    /// `Span.SpanKind` of trace.proto.
    static func kind(_ kind: SpanKind) -> Int64 {
        switch kind {
        case .internal: 1
        case .server: 2
        case .client: 3
        case .producer: 4
        case .consumer: 5
        }
    }

    /// `Span.flags`: the W3C trace flags in bits 0-7, and bits 8 and 9 for "the parent is known to
    /// be local / remote" (`SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK`, `SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK`).
    static func flags(sampled: Bool, remoteParent: Bool?) -> UInt32 {
        var flags: UInt32 = sampled ? 0x01 : 0x00
        if let remoteParent { flags |= 0x100 | (remoteParent ? 0x200 : 0) }
        return flags
    }

    static func event(_ event: SpanEvent) -> JSONValue {
        var fields: [String: JSONValue] = [
            "timeUnixNano": .string(String(event.nanosecondsSinceEpoch)),
            "name": .string(event.name),
        ]
        if !event.attributes.isEmpty { fields["attributes"] = attributes(event.attributes) }
        return .object(fields)
    }

    static func link(_ link: RecordedSpan.Link) -> JSONValue {
        var fields: [String: JSONValue] = [
            "traceId": .string(link.context.traceID.hexString),
            "spanId": .string(link.context.spanID.hexString),
            "flags": .integer(Int64(flags(sampled: link.context.isSampled, remoteParent: link.context.isRemote))),
        ]
        if let state = link.context.traceState, !state.isEmpty { fields["traceState"] = .string(state) }
        if !link.attributes.isEmpty { fields["attributes"] = attributes(link.attributes) }
        return .object(fields)
    }

    /// `repeated KeyValue`, sorted by key so equal spans encode to equal bytes.
    static func attributes(_ attributes: SpanAttributes) -> JSONValue {
        var pairs: [(String, SpanAttribute)] = []
        pairs.reserveCapacity(attributes.count)
        attributes.forEach { pairs.append(($0, $1)) }
        pairs.sort { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
        return .array(pairs.map { .object(["key": .string($0.0), "value": anyValue($0.1)]) })
    }

    /// `AnyValue`: `stringValue`, `boolValue`, `intValue` (a decimal string), `doubleValue` (a number;
    /// NaN and the infinities as the strings the protobuf JSON mapping uses), `arrayValue`.
    static func anyValue(_ attribute: SpanAttribute) -> JSONValue {
        switch attribute {
        case .string(let value): .object(["stringValue": .string(value)])
        case .bool(let value): .object(["boolValue": .bool(value)])
        case .int32(let value): .object(["intValue": .string(String(value))])
        case .int64(let value): .object(["intValue": .string(String(value))])
        case .double(let value): .object(["doubleValue": double(value)])
        case .stringArray(let values): array(values.map { .string($0) })
        case .boolArray(let values): array(values.map { .bool($0) })
        case .int32Array(let values): array(values.map { .int64(Int64($0)) })
        case .int64Array(let values): array(values.map { .int64($0) })
        case .doubleArray(let values): array(values.map { .double($0) })
        case .stringConvertible(let value): .object(["stringValue": .string(String(describing: value))])
        case .stringConvertibleArray(let values): array(values.map { .string(String(describing: $0)) })
        default: .object(["stringValue": .string("")])
        }
    }

    private enum Element {
        case string(String), bool(Bool), int64(Int64), double(Double)
    }

    private static func array(_ elements: [Element]) -> JSONValue {
        .object(["arrayValue": .object(["values": .array(elements.map { element in
            switch element {
            case .string(let value): .object(["stringValue": .string(value)])
            case .bool(let value): .object(["boolValue": .bool(value)])
            case .int64(let value): .object(["intValue": .string(String(value))])
            case .double(let value): .object(["doubleValue": double(value)])
            }
        })])])
    }

    private static func double(_ value: Double) -> JSONValue {
        if value.isNaN { return .string("NaN") }
        if value.isInfinite { return .string(value > 0 ? "Infinity" : "-Infinity") }
        return .number(value)
    }
}
