/// Prometheus text exposition of a worker's counters (format 0.0.4), written by hand: a dozen series,
/// rendered on demand from ``WorkerStatistics``.
public enum WorkerMetrics {
    public static func render(_ s: WorkerStatistics.Snapshot, storeUp: Bool, stalled: Bool) -> String {
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(String, Int)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for (labels, value) in samples { out += "\(name)\(labels) \(value)\n" }
        }
        metric("ksm_jobs_received_total", "counter", "License jobs consumed from Kafka.", [("", s.received)])
        metric("ksm_replies_total", "counter", "Replies published, by status.",
               s.repliesByStatus.sorted { $0.key < $1.key }.map { ("{status=\"\($0.key)\"}", $0.value) })
        metric("ksm_dead_letters_total", "counter", "Messages sent to the dead-letter topic.", [("", s.deadLettered)])
        metric("ksm_batches_total", "counter", "Batches processed (one Redis round trip each).", [("", s.batches)])
        metric("ksm_store_retries_total", "counter", "Batches retried after a Redis outage.", [("", s.storeRetries)])
        metric("ksm_publish_retries_total", "counter", "Reply publishes retried after a Kafka error.", [("", s.publishRetries)])
        metric("ksm_consumer_pauses_total", "counter", "Times the consumer paused for backpressure.", [("", s.pauses)])
        metric("ksm_jobs_in_flight", "gauge", "Jobs received and not yet answered.", [("", s.inFlight)])
        metric("ksm_assigned_partitions", "gauge", "Request partitions this worker owns.", [("", s.assignedPartitions)])
        metric("ksm_store_up", "gauge", "1 when the last Redis health check answered.", [("", storeUp ? 1 : 0)])
        metric("ksm_processing_stalled", "gauge", "1 when the watchdog saw the processing loop stall.", [("", stalled ? 1 : 0)])
        return out
    }
}
