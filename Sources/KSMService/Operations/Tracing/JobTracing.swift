import Foundation
import Kafka
import Tracing

/// W3C trace context for license jobs, and one span per job through swift-distributed-tracing.
///
/// Propagation is always on and costs two header lookups: a job's valid `traceparent` (and its
/// `tracestate`) is copied onto its reply, so the edge can join request and reply in its own trace
/// even when this worker exports nothing. With tracing enabled (`ksm serve --tracing`), each job
/// also gets a consumer span `fps.license` whose parent is extracted from the job's headers by the
/// bootstrapped tracer, with events `received` (at arrival), `processed` and `published`, and the
/// tracer injects the span's own context into the reply instead of the pass-through. Plugging an
/// exporter means bootstrapping a tracer (`InstrumentationSystem.bootstrap`) before the worker
/// starts (README, "Tracing"); without one the no-op tracer makes spans free.
public enum JobTracing {
    /// The W3C Trace Context header names, as Kafka header keys.
    public static let traceparent = "traceparent"
    public static let tracestate = "tracestate"

    /// Reads Kafka headers (the last one wins, as for HTTP).
    public struct HeaderExtractor: Extractor {
        public init() {}
        public func extract(key: String, from carrier: [(String, [UInt8])]) -> String? {
            carrier.last { $0.0 == key }.map { String(decoding: $0.1, as: UTF8.self) }
        }
    }

    /// Writes Kafka headers, replacing one of the same name.
    public struct HeaderInjector: Injector {
        public init() {}
        public func inject(_ value: String, forKey key: String, into carrier: inout [(String, [UInt8])]) {
            carrier.removeAll { $0.0 == key }
            carrier.append((key, Array(value.utf8)))
        }
    }

    /// The trace headers to copy from a job to its reply: a well-formed `traceparent` and, with it,
    /// `tracestate` (at most 512 bytes, as the W3C spec lets a vendor truncate). Nothing otherwise.
    public static func passThrough(_ headers: [(String, [UInt8])]) -> [(String, [UInt8])] {
        guard let parent = headers.last(where: { $0.0 == traceparent })?.1, isValidTraceparent(parent) else { return [] }
        var out = [(traceparent, parent)]
        if let state = headers.last(where: { $0.0 == tracestate })?.1, state.count <= 512 { out.append((tracestate, state)) }
        return out
    }

    /// `version-traceid-parentid-flags` in lowercase hex (W3C Trace Context, section 3.2): 2-32-16-2
    /// digits, and neither the trace ID nor the parent ID all zeros. Version `ff` is invalid.
    public static func isValidTraceparent(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 55, bytes[2] == 0x2D, bytes[35] == 0x2D, bytes[52] == 0x2D else { return false }
        // A future version may append fields after a dash; version 00 is exactly 55 bytes.
        guard bytes.count == 55 || (bytes[0...1] != [0x30, 0x30] && bytes[55] == 0x2D) else { return false }
        func hex(_ range: Range<Int>) -> Bool { bytes[range].allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } }
        func zero(_ range: Range<Int>) -> Bool { bytes[range].allSatisfy { $0 == 0x30 } }
        return hex(0..<2) && hex(3..<35) && hex(36..<52) && hex(53..<55)
            && bytes[0...1] != [0x66, 0x66] && !zero(3..<35) && !zero(36..<52)
    }

    /// Starts a job's span under the context the tracer extracts from the job's headers, back-dated
    /// to its arrival.
    static func start(_ job: ScheduledJob) -> any Span {
        var context = InstrumentationContext.topLevel
        InstrumentationSystem.tracer.extract(job.message.headers, into: &context, using: HeaderExtractor())
        let arrival = WallInstant(job.arrived)
        let span = startSpan("fps.license", context: context, ofKind: .consumer, at: arrival)
        span.addEvent(SpanEvent(name: "received", at: arrival))
        span.attributes["messaging.system"] = "kafka"
        span.attributes["messaging.destination.name"] = job.message.topic
        span.attributes["messaging.kafka.destination.partition"] = Int(job.message.partition)
        span.attributes["messaging.kafka.message.offset"] = Int(job.message.offset)
        span.attributes["fps.priority"] = job.priority.rawValue
        if case .success(let decoded) = job.decoded {
            span.attributes["fps.request_id"] = decoded.id.value
            span.attributes["fps.tenant"] = decoded.tenant.value
        }
        return span
    }

    /// The headers a reply carries for its trace: the tracer's injection of the job's span when
    /// there is one, else the job's own pass-through headers.
    static func replyHeaders(for message: KafkaMessage, span: (any Span)?) -> [(String, [UInt8])] {
        var headers = passThrough(message.headers)
        if let span { InstrumentationSystem.tracer.inject(span.context, into: &headers, using: HeaderInjector()) }
        return headers
    }

    /// A `ContinuousClock` instant on the wall clock, so a span can start when the job arrived.
    struct WallInstant: TracerInstant {
        var nanosecondsSinceEpoch: UInt64

        init(_ instant: ContinuousClock.Instant) {
            let age = ContinuousClock.now - instant
            let now = UInt64(max(0, Date().timeIntervalSince1970 * 1e9))
            let (seconds, attoseconds) = age.components
            let ageNanoseconds = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds / 1_000_000_000))
            nanosecondsSinceEpoch = now > ageNanoseconds ? now - ageNanoseconds : now
        }

        static func < (a: WallInstant, b: WallInstant) -> Bool { a.nanosecondsSinceEpoch < b.nanosecondsSinceEpoch }
    }
}
