import Kafka
import Licensing

/// Prometheus text exposition (format 0.0.4) of a worker, written by hand and rendered on demand.
///
/// Hand-written rather than swift-prometheus: the series are few and fixed, the hot path only bumps
/// plain counters in ``WorkerStatistics`` under one lock per batch, and a scrape (a few a minute)
/// pays for the formatting. Names and labels are listed in the README's Operations section; label
/// values are bounded (status names, three classes, at most `tenant-label-limit` tenants + `other`,
/// the worker's own partitions).
public enum WorkerMetrics {
    /// Everything a scrape reads; each source is cheap to read from the admin thread.
    public struct Inputs: Sendable {
        public var statistics: WorkerStatistics.Snapshot
        public var storeUp: Bool
        /// False when the store holds no provisioning marker (``LicenseStore/isProvisioned()``).
        public var storeProvisioned: Bool
        public var stalled: Bool
        /// Per assigned partition (``KafkaConsumer/lag``).
        public var lag: [TopicPartition: Int64]
        /// Nil when the cache is off.
        public var cache: CacheStatistics?
        /// Nil until the first lease slot count finished.
        public var slots: LeaseSlotGauge.Sample?
        /// Nil when spans are not exported (no `--otlp-endpoint`).
        public var tracing: TraceExportStatistics.Snapshot?

        public init(statistics: WorkerStatistics.Snapshot, storeUp: Bool, storeProvisioned: Bool = true, stalled: Bool, lag: [TopicPartition: Int64] = [:],
                    cache: CacheStatistics? = nil, slots: LeaseSlotGauge.Sample? = nil, tracing: TraceExportStatistics.Snapshot? = nil) {
            self.statistics = statistics
            self.storeUp = storeUp
            self.storeProvisioned = storeProvisioned
            self.stalled = stalled
            self.lag = lag
            self.cache = cache
            self.slots = slots
            self.tracing = tracing
        }
    }

    /// The classes always exported (zero included), so a dashboard's series exist before traffic.
    static let classes = ["continuity", "new", "prefetch"]

    public static func render(_ s: WorkerStatistics.Snapshot, storeUp: Bool, stalled: Bool) -> String {
        render(Inputs(statistics: s, storeUp: storeUp, stalled: stalled))
    }

    public static func render(_ inputs: Inputs) -> String {
        let s = inputs.statistics
        var out = ""
        out.reserveCapacity(8192)
        func header(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(String, Int)]) {
            header(name, type, help)
            for (labels, value) in samples { out += "\(name)\(labels) \(value)\n" }
        }
        func perClass(_ values: [String: Int]) -> [(String, Int)] {
            Set(classes).union(values.keys).sorted().map { (labels(["class": $0]), values[$0] ?? 0) }
        }
        func histogram(_ name: String, _ help: String, _ values: [String: LatencyHistogram]) {
            header(name, "histogram", help)
            for priority in Set(classes).union(values.keys).sorted() {
                let h = values[priority] ?? LatencyHistogram()
                for (le, count) in h.cumulative { out += "\(name)_bucket\(labels(["class": priority, "le": le])) \(count)\n" }
                out += "\(name)_sum\(labels(["class": priority])) \(h.sum)\n"
                out += "\(name)_count\(labels(["class": priority])) \(h.count)\n"
            }
        }

        metric("ksm_jobs_received_total", "counter", "License jobs consumed from Kafka.", [("", s.received)])
        metric("ksm_replies_total", "counter", "Replies published, by status.",
               s.repliesByStatus.sorted { $0.key < $1.key }.map { (labels(["status": $0.key]), $0.value) })
        metric("ksm_replies_by_tenant_total", "counter",
               "Replies published, by status, tenant (first N tenants, then \"other\") and priority class.",
               s.replies.sorted { $0.key < $1.key }.map { (labels(["status": $0.key.status, "tenant": $0.key.tenant, "class": $0.key.priority]), $0.value) })
        metric("ksm_dead_letters_total", "counter", "Messages sent to the dead-letter topic.", [("", s.deadLettered)])
        metric("ksm_batches_total", "counter", "Batches processed (one Redis round trip each).", [("", s.batches)])
        metric("ksm_store_retries_total", "counter", "Batches retried after a Redis outage.", [("", s.storeRetries)])
        metric("ksm_publish_retries_total", "counter", "Reply publishes retried after a Kafka error.", [("", s.publishRetries)])
        metric("ksm_consumer_pauses_total", "counter", "Times the consumer paused for backpressure.", [("", s.pauses)])
        histogram("ksm_job_latency_seconds", "Job received from Kafka until its reply's delivery report, by priority class.", s.endToEndLatency)
        histogram("ksm_batch_processing_seconds", "Processing time of one batch (store round trips and crypto), by the class of its first job.", s.batchLatency)
        metric("ksm_jobs_in_flight", "gauge", "Jobs received and not yet answered.", [("", s.inFlight)])
        metric("ksm_jobs_processing", "gauge", "Jobs taken by a batch and not yet delivered, by priority class.", perClass(s.processingByClass))
        metric("ksm_jobs_queued", "gauge", "Jobs waiting in the scheduler, by priority class.", perClass(s.queuedByClass))
        // Every source/kind pair is always present (0 until it happens), so alerts on increase() see it.
        let kafkaKeys = Set(["consumer", "producer"].flatMap { source in
            KafkaError.Kind.allCases.map { WorkerStatistics.KafkaErrorKey(source: source, kind: $0.rawValue) }
        }).union(s.kafkaErrors.keys)
        metric("ksm_kafka_errors_total", "counter",
               "Kafka errors by source (consumer, producer) and kind (offset_reset, commit_failed, brokers_down, transport, message_too_large, timed_out, other).",
               kafkaKeys.sorted().map { (labels(["source": $0.source, "kind": $0.kind]), s.kafkaErrors[$0] ?? 0) })
        metric("ksm_messages_dropped_total", "counter", "Messages given up on: neither their answer nor a headers-only dead letter could be published.",
               [("", s.dropped)])
        metric("ksm_store_errors_total", "counter", "Redis errors, by operation and error code.",
               s.storeErrors.sorted { $0.key < $1.key }.map { (labels(["operation": $0.key.operation, "code": $0.key.code]), $0.value) })
        metric("ksm_consumer_lag", "gauge", "Messages on the broker past this worker's fetch position, per assigned partition (sampled every 2 s).",
               inputs.lag.sorted { ($0.key.topic, $0.key.partition) < ($1.key.topic, $1.key.partition) }
                   .map { (labels(["topic": $0.key.topic, "partition": "\($0.key.partition)"]), Int($0.value)) })
        if let cache = inputs.cache {
            metric("ksm_cache_reads_total", "counter", "Cached store reads: hit (fresh entry), miss (read from Redis), join (waited for a read in flight).",
                   [(labels(["result": "hit"]), cache.hits), (labels(["result": "join"]), cache.joins), (labels(["result": "miss"]), cache.misses)])
        }
        if let slots = inputs.slots {
            metric("ksm_lease_slots_in_use", "gauge", "Unexpired lease slots in the store (periodic count).", [("", slots.slots)])
            metric("ksm_lease_slot_accounts", "gauge", "Accounts holding at least one unexpired slot (periodic count).", [("", slots.accounts)])
            metric("ksm_lease_slots_count_complete", "gauge", "1 when the last slot count saw every slot set.", [("", slots.isComplete ? 1 : 0)])
        }
        if let tracing = inputs.tracing {
            metric("ksm_trace_spans_exported_total", "counter", "Spans the OTLP collector accepted.", [("", tracing.exported)])
            metric("ksm_trace_spans_dropped_total", "counter",
                   "Spans lost: queue_full (export queue full), export_failed (every attempt failed), rejected (partial success), shutdown.",
                   tracing.dropped.sorted { $0.key < $1.key }.map { (labels(["reason": $0.key]), $0.value) })
            metric("ksm_trace_export_errors_total", "counter", "Failed OTLP export attempts (retries included), by reason: connection, timeout, http, protocol.",
                   tracing.exportErrors.sorted { $0.key < $1.key }.map { (labels(["reason": $0.key]), $0.value) })
            metric("ksm_trace_spans_queued", "gauge", "Finished spans waiting for export.", [("", tracing.queued)])
        }
        metric("ksm_assigned_partitions", "gauge", "Request partitions this worker owns.", [("", s.assignedPartitions)])
        metric("ksm_store_up", "gauge", "1 when the last Redis health check answered.", [("", inputs.storeUp ? 1 : 0)])
        metric("ksm_store_provisioned", "gauge", "1 when Redis holds the provisioning marker; 0: it lost its data (restart without persistence) or was never provisioned.",
               [("", inputs.storeProvisioned ? 1 : 0)])
        metric("ksm_processing_stalled", "gauge", "1 when the watchdog saw the processing loop stall.", [("", inputs.stalled ? 1 : 0)])
        return out
    }

    /// `{a="x",b="y"}` in the given order, values escaped as the exposition format requires.
    static func labels(_ pairs: KeyValuePairs<String, String>) -> String {
        "{" + pairs.map { "\($0.key)=\"\(escape($0.value))\"" }.joined(separator: ",") + "}"
    }

    static func escape(_ value: String) -> String {
        guard value.contains(where: { $0 == "\\" || $0 == "\"" || $0 == "\n" }) else { return value }
        var out = ""
        for c in value {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out
    }
}
