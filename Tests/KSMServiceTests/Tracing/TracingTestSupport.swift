import Foundation
@testable import KSMService
import Licensing
import Synchronization
import Tracing

/// Keeps every span handed to it, for tests of the tracer alone.
final class CollectingProcessor: SpanProcessor {
    private let spans = Mutex<[RecordedSpan]>([])
    var ended: [RecordedSpan] { spans.withLock { $0 } }
    func onEnd(_ span: RecordedSpan) { spans.withLock { $0.append(span) } }
    func forceFlush() {}
    func flush(timeout: Duration) async -> Bool { true }
}

/// An exporter that records batches and answers with a scripted outcome, optionally held at a gate.
final class RecordingExporter: SpanExporter {
    private let state = Mutex<[[RecordedSpan]]>([])
    let outcome: @Sendable ([RecordedSpan]) -> SpanExportOutcome
    /// When set, every export waits until the test opens the gate: a deterministic "slow" exporter.
    let gate: DispatchSemaphore?

    init(gated: Bool = false, outcome: @escaping @Sendable ([RecordedSpan]) -> SpanExportOutcome = { SpanExportOutcome(accepted: $0.count) }) {
        self.gate = gated ? DispatchSemaphore(value: 0) : nil
        self.outcome = outcome
    }

    /// Lets one waiting (or the next) export finish.
    func openGate() { gate?.signal() }

    var batches: [[RecordedSpan]] { state.withLock { $0 } }
    var exportedNames: [String] { batches.flatMap { $0.map(\.name) } }

    func export(_ spans: [RecordedSpan], deadline: ContinuousClock.Instant) -> SpanExportOutcome {
        gate?.wait()
        state.withLock { $0.append(spans) }
        return outcome(spans)
    }
}

enum TracingFixtures {
    static let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let parentSpanID = "00f067aa0ba902b7"
    static let traceparent = "00-\(traceID)-\(parentSpanID)-01"

    /// A finished span named `name`, for processor tests.
    static func span(_ name: String) -> RecordedSpan {
        var span = RecordedSpan(name: name, kind: .internal, context: TraceContext(traceID: .random(), spanID: .random(), isSampled: true),
                                startNanoseconds: 1_000)
        span.endNanoseconds = 2_000
        return span
    }

    /// Polls `condition` every 10 ms until it holds or `timeout` passes.
    static func eventually(timeout: Duration = .seconds(20), _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}

extension JSONValue {
    /// `object[key]`, or nil for a non-object.
    subscript(_ key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// `array[index]`, or nil.
    subscript(_ index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }

    /// The `value` of the KeyValue whose `key` is `key`, in an OTLP attribute list.
    func attribute(_ key: String) -> JSONValue? {
        arrayValue?.first { $0["key"]?.stringValue == key }?["value"]
    }
}
