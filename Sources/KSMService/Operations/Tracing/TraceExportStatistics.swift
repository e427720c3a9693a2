import Synchronization

/// Counters of the span pipeline, bumped by the tracer's processor and its export thread and read by
/// `/metrics` (``WorkerMetrics``). One small lock: it is taken once per export batch, per dropped
/// span and per scrape, never per exported span.
public final class TraceExportStatistics: Sendable {
    /// Why spans were dropped: the `reason` label of `ksm_trace_spans_dropped_total`.
    public struct DropReason: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        /// The queue held `maximumQueueSize` spans when one more ended.
        public static let queueFull = DropReason(rawValue: "queue_full")
        /// Every attempt to export the span's batch failed, or the collector refused it for good.
        public static let exportFailed = DropReason(rawValue: "export_failed")
        /// The collector accepted the batch but rejected these spans (OTLP partial success).
        public static let rejected = DropReason(rawValue: "rejected")
        /// The span ended after the processor stopped, or was still queued when it was cancelled.
        public static let shutdown = DropReason(rawValue: "shutdown")

        public static let all: [DropReason] = [.exportFailed, .queueFull, .rejected, .shutdown]
        public var description: String { rawValue }
    }

    /// A consistent-enough copy for one scrape.
    public struct Snapshot: Sendable, Hashable {
        public var exported = 0
        public var dropped: [String: Int] = [:]
        public var exportErrors: [String: Int] = [:]
        /// Spans waiting in the queue (filled in by ``BatchSpanProcessor/snapshot``).
        public var queued = 0

        public init() {}
    }

    private let counters = Mutex(Snapshot())
    static let errorCodes: [TraceExportError.Code] = [.connection, .httpStatus, .malformedResponse, .timeout]

    public init() {}

    func countExported(_ n: Int) { counters.withLock { $0.exported += n } }

    func countDropped(_ n: Int, _ reason: DropReason) {
        guard n > 0 else { return }
        counters.withLock { $0.dropped[reason.rawValue, default: 0] += n }
    }

    func countError(_ code: TraceExportError.Code) { counters.withLock { $0.exportErrors[code.rawValue, default: 0] += 1 } }

    /// Every drop reason and error code is present (zero included), so a dashboard's series exist
    /// before the first failure.
    public var snapshot: Snapshot {
        var s = counters.withLock { $0 }
        for reason in DropReason.all where s.dropped[reason.rawValue] == nil { s.dropped[reason.rawValue] = 0 }
        for code in Self.errorCodes where s.exportErrors[code.rawValue] == nil { s.exportErrors[code.rawValue] = 0 }
        return s
    }
}
