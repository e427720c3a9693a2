import Foundation
import Kafka
import Tracing
import W3CTraceContext

/// W3C trace context for license jobs, and one span per job through swift-distributed-tracing.
///
/// Propagation is always on and costs two header lookups: a job's valid `traceparent` (and its
/// `tracestate`) is copied onto its reply, so the edge can join request and reply in its own trace
/// even when this worker exports nothing. With tracing enabled (`ksm serve --tracing`), each job
/// also gets a consumer span `fps.license` whose parent is extracted from the job's headers by the
/// bootstrapped tracer, with events `received` (at arrival), `processed` and `published`, and the
/// tracer injects the span's own context into the reply instead of the pass-through. With
/// `--otlp-endpoint` the bootstrapped tracer is swift-otel's (parent-based ratio sampler, W3C
/// propagator, batch span processor, OTLP/HTTP exporter; docs/operations.md, "Tracing"); without one the no-op
/// tracer makes spans free.
package enum JobTracing {
    /// The W3C Trace Context header names, as Kafka header keys.
    package static let traceparent = "traceparent"
    package static let tracestate = "tracestate"

    /// Reads Kafka headers (the last one wins, as for HTTP).
    struct HeaderExtractor: Extractor {
        package init() {}
        func extract(key: String, from carrier: [(String, [UInt8])]) -> String? {
            carrier.last { $0.0 == key }.map { String(decoding: $0.1, as: UTF8.self) }
        }
    }

    /// Writes Kafka headers, replacing one of the same name.
    struct HeaderInjector: Injector {
        package init() {}
        func inject(_ value: String, forKey key: String, into carrier: inout [(String, [UInt8])]) {
            carrier.removeAll { $0.0 == key }
            carrier.append((key, Array(value.utf8)))
        }
    }

    /// The longest `tracestate` passed on: the W3C spec lets a vendor drop a longer one (section 3.3.1.5).
    package static let maximumTraceStateLength = 512

    /// The trace headers to copy from a job to its reply: a well-formed `traceparent` and, with it,
    /// `tracestate` (at most 512 printable bytes, as the W3C spec lets a vendor truncate). Nothing otherwise.
    package static func passThrough(_ headers: [(String, [UInt8])]) -> [(String, [UInt8])] {
        passThroughAndVersionZero(headers).headers
    }

    /// ``passThrough(_:)``, and the `traceparent` as version 00 (nil when none passes), read once.
    static func passThroughAndVersionZero(_ headers: [(String, [UInt8])]) -> (headers: [(String, [UInt8])], versionZero: [UInt8]?) {
        guard let parent = headers.last(where: { $0.0 == traceparent })?.1, let zero = versionZero(parent) else { return ([], nil) }
        var out = [(traceparent, parent)]
        if let state = headers.last(where: { $0.0 == tracestate })?.1, !state.isEmpty, state.count <= maximumTraceStateLength,
            state.allSatisfy({ (0x20...0x7E).contains($0) })
        {
            out.append((tracestate, state))
        }
        return (out, zero)
    }

    /// A `traceparent` as W3C Trace Context (section 3.2) defines it: `version-traceid-parentid-flags`
    /// in lowercase hex, neither ID all zeros, version `ff` invalid (``versionZero(_:)`` has the rules).
    package static func isValidTraceparent(_ bytes: [UInt8]) -> Bool {
        versionZero(bytes) != nil
    }

    /// The `traceparent` as version 00, or nil when it is malformed. Version 00 is checked by
    /// swift-w3c-trace-context (swift-otel's own parser), which knows no other version; a later
    /// version is read as W3C Trace Context 3.2.4 says: its first 55 characters as version 00 fields,
    /// followed by nothing or by a dash and fields of its own, which are dropped.
    static func versionZero(_ bytes: [UInt8]) -> [UInt8]? {
        func lowercaseHex(_ c: UInt8) -> Bool { (0x30...0x39).contains(c) || (0x61...0x66).contains(c) }
        guard bytes.count >= 55, lowercaseHex(bytes[0]), lowercaseHex(bytes[1]) else { return nil }
        let f = UInt8(ascii: "f")
        let zero = UInt8(ascii: "0")
        guard !(bytes[0] == f && bytes[1] == f) else { return nil }
        // Version 00 is exactly 55 characters; a later one may go on after a dash.
        if bytes[0] == zero && bytes[1] == zero {
            guard bytes.count == 55 else { return nil }
        } else {
            guard bytes.count == 55 || bytes[55] == UInt8(ascii: "-") else { return nil }
        }
        let candidate = Array("00".utf8) + bytes[2..<55]
        let text = String(decoding: candidate, as: UTF8.self)
        return (try? W3CTraceContext.TraceContext(traceParentHeaderValue: text)) != nil ? candidate : nil
    }

    /// Starts a job's span under the context the tracer extracts from the job's headers, back-dated
    /// to its arrival.
    static func start(_ job: ScheduledJob, tracer: any Tracer = InstrumentationSystem.tracer) -> any Span {
        var context = InstrumentationContext.topLevel
        // Only a well-formed traceparent reaches the tracer, as version 00: swift-otel logs a warning,
        // with every header of the job, for each one it cannot parse (a later version included); a
        // malformed one just starts a new trace.
        var (carrier, zero) = passThroughAndVersionZero(job.message.headers)
        if let zero { carrier[0].1 = zero }
        tracer.extract(carrier, into: &context, using: HeaderExtractor())
        let arrival = WallInstant(job.arrived)
        let span = startSpan(tracer, context: context, at: arrival)
        guard span.isRecording else { return span }
        span.addEvent(SpanEvent(name: "received", at: arrival))
        span.updateAttributes { attributes in
            attributes["messaging.system"] = "kafka"
            attributes["messaging.operation.type"] = "process"
            attributes["messaging.destination.name"] = job.message.topic
            attributes["messaging.destination.partition.id"] = String(job.message.partition)
            attributes["messaging.kafka.destination.partition"] = Int(job.message.partition)
            attributes["messaging.kafka.message.offset"] = Int(job.message.offset)
            attributes["fps.priority"] = job.priority.rawValue
            if case .success(let decoded) = job.decoded {
                attributes["fps.request_id"] = decoded.id.value
                attributes["fps.tenant"] = decoded.tenant.value
            }
        }
        return span
    }

    /// Opens the existential, so the tracer's own `startSpan` (not the deprecated `startAnySpan`) runs.
    private static func startSpan(_ tracer: some Tracer, context: InstrumentationContext, at arrival: WallInstant) -> any Span {
        tracer.startSpan("fps.license", context: context, ofKind: .consumer, at: arrival)
    }

    /// Records a job's answer on its span: `fps.status` (and `fps.status_code`), and an error status
    /// when the worker, not the request, failed: a dead letter, or `storeUnavailable`, `internalErr`,
    /// `keyUnwrapFailed`. Policy refusals are correct answers and leave the status unset.
    static func recordOutcome(_ outcome: JobOutcome, on span: any Span) {
        guard span.isRecording else { return }
        span.addEvent("processed")
        switch outcome {
        case .reply(let reply):
            span.updateAttributes { attributes in
                attributes["fps.status"] = reply.status.name
                attributes["fps.status_code"] = Int(reply.status.rawValue)
            }
            if serverFaults.contains(reply.status) { span.setStatus(SpanStatus(code: .error, message: reply.status.name)) }
        case .deadLetter, .deadLetterHeadersOnly:
            span.setStatus(SpanStatus(code: .error, message: "dead-lettered: not a readable job"))
        }
    }

    /// Reply statuses that mean the worker failed the job (docs/operations.md, Alerts: the error ratio).
    static let serverFaults: Set<KSMStatus> = [.storeUnavailable, .keyUnwrapFailed, KSMStatus(.internalError)]

    /// The headers a reply carries for its trace: the tracer's injection of the job's span when
    /// there is one (the same trace ID, the span's own ID as parent-id), else the job's own
    /// pass-through headers (no-op tracer, or tracing off).
    static func replyHeaders(for message: KafkaMessage, span: (any Span)?, tracer: any Tracer = InstrumentationSystem.tracer) -> [(String, [UInt8])] {
        if let span {
            var injected: [(String, [UInt8])] = []
            tracer.inject(span.context, into: &injected, using: HeaderInjector())
            if !injected.isEmpty { return injected }
        }
        return passThrough(message.headers)
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
