/// How ``BatchSpanProcessor`` queues and ships spans. The defaults are OpenTelemetry's batch span
/// processor defaults (`OTEL_BSP_*`), so an operator's expectations carry over.
public struct BatchSpanProcessorConfiguration: Sendable, Hashable {
    /// Spans held for export; when full, further spans are dropped and counted
    /// (`ksm_trace_spans_dropped_total{reason="queue_full"}`). Default: 2048 (`OTEL_BSP_MAX_QUEUE_SIZE`).
    public var maximumQueueSize = 2048
    /// Largest batch per export request; a full batch is exported at once, without waiting for the
    /// schedule. Default: 512 (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`); capped at `maximumQueueSize`.
    public var maximumExportBatchSize = 512
    /// Longest a span waits in the queue before its (partial) batch is exported. Default: 5 s
    /// (`OTEL_BSP_SCHEDULE_DELAY`).
    public var scheduleDelay: Duration = .seconds(5)
    /// Longest one batch export may take, retries included. Default: 10 s (`OTEL_EXPORTER_OTLP_TIMEOUT`).
    public var exportTimeout: Duration = .seconds(10)
    /// Longest graceful shutdown waits for the final flush before spans still queued are dropped.
    /// Default: 5 s, well inside the worker's own shutdown budget.
    public var shutdownFlushTimeout: Duration = .seconds(5)
    /// At most one export-error log line per this interval (the rest are counted into the next
    /// line). Default: 60 s.
    public var errorLogInterval: Duration = .seconds(60)

    public init() {}

    /// The batch size actually used: at least 1, at most the queue size.
    var effectiveBatchSize: Int { max(1, min(maximumExportBatchSize, maximumQueueSize)) }
}
