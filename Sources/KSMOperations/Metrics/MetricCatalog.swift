import KSMService

/// Every metric the worker exports: name, type and help text, in one place.
///
/// Why a catalog: swift-metrics has no help text and no per-metric buckets, but `promtool check
/// metrics` wants a `# HELP` line per family and the latency alerts need their own buckets. The
/// worker creates its handlers by name through any `MetricsFactory`; ``DescribedPrometheusFactory``
/// looks the name up here when `ksm serve` exposes them with swift-prometheus.
/// `scripts/check-observability.py` reads the names below (`counter("ksm_…"`, `gauge(…`,
/// `histogram(…`), so the dashboard and the alerts cannot name a series the worker does not export.
package enum MetricCatalog {
    package enum Kind: Sendable { case counter, gauge, histogram }

    package struct Entry: Sendable {
        package var name: String
        package var kind: Kind
        package var help: String
    }

    static func counter(_ name: String, _ help: String) -> Entry { Entry(name: name, kind: .counter, help: help) }
    static func gauge(_ name: String, _ help: String) -> Entry { Entry(name: name, kind: .gauge, help: help) }
    static func histogram(_ name: String, _ help: String) -> Entry { Entry(name: name, kind: .histogram, help: help) }

    package static let entries: [Entry] = [
        gauge("ksm_build_info", "Always 1; the version label says which ksm build runs."),
        counter("ksm_jobs_received_total", "License jobs consumed from Kafka."),
        counter("ksm_replies_total", "Replies published, by status."),
        counter(
            "ksm_replies_by_tenant_total",
            "Replies published, by status, tenant (first N known tenants, then \"other\"; \"unknown\" for jobs of no known tenant) and priority class."),
        counter("ksm_dead_letters_total", "Messages sent to the dead-letter topic."),
        counter("ksm_batches_total", "Batches processed (one Redis round trip each)."),
        counter("ksm_store_retries_total", "Batches retried after a Redis outage."),
        counter("ksm_reply_topic_refusals_total", "Jobs refused because their reply-topic header named a topic outside the allowed reply topics."),
        counter("ksm_publish_retries_total", "Reply publishes retried after a Kafka error."),
        counter("ksm_consumer_pauses_total", "Times the consumer paused for backpressure."),
        counter(
            "ksm_fetch_switch_failures_total",
            "Pauses and resumes of request topics librdkafka did not take, by fetch class (requests, continuity, new, prefetch) and action (pause, resume); each is made again until it takes."
        ),
        gauge("ksm_fetch_switch_pending", "1 while a fetch class's decided pause or resume is not taken by librdkafka yet (being retried)."),
        gauge("ksm_fetch_paused", "1 while librdkafka has every assigned partition of the fetch class paused."),
        histogram("ksm_job_latency_seconds", "Job received from Kafka until its reply's delivery report, by priority class."),
        histogram("ksm_batch_processing_seconds", "Processing time of one batch (store round trips and crypto), by the class of its first job."),
        gauge("ksm_jobs_in_flight", "Jobs received and not yet answered."),
        gauge("ksm_jobs_processing", "Jobs taken by a batch and not yet delivered, by priority class."),
        gauge("ksm_jobs_queued", "Jobs waiting in the scheduler, by priority class."),
        counter(
            "ksm_kafka_errors_total",
            "Kafka errors by source (consumer, producer) and kind (offset_reset, commit_failed, brokers_down, transport, message_too_large, timed_out, other)."),
        counter("ksm_messages_dropped_total", "Messages given up on: neither their answer nor a headers-only dead letter could be published."),
        counter("ksm_store_errors_total", "Redis errors, by operation and error code."),
        gauge("ksm_consumer_lag", "Messages on the broker past this worker's fetch position, per assigned partition (sampled every 2 s)."),
        gauge(
            "ksm_consumer_lag_by_class",
            "Consumer lag summed over this worker's partitions of each class topic (continuity, new, prefetch), and requests for the requests topic."),
        counter("ksm_cache_reads_total", "Cached store reads: hit (fresh entry), miss (read from Redis), join (waited for a read in flight)."),
        gauge("ksm_lease_slots_in_use", "Unexpired lease slots in the store (periodic count)."),
        gauge("ksm_lease_slot_accounts", "Accounts holding at least one unexpired slot (periodic count)."),
        gauge("ksm_lease_slots_count_complete", "1 when the last slot count saw every slot set."),
        gauge("ksm_assigned_partitions", "Request partitions this worker owns."),
        gauge("ksm_store_up", "1 when the last Redis health check answered."),
        gauge(
            "ksm_store_provisioned", "1 when Redis holds the provisioning marker; 0: it lost its data (restart without persistence) or was never provisioned."),
        gauge("ksm_processing_stalled", "1 when the watchdog saw the processing loop stall."),
        gauge(
            "ksm_expected_rotation_load",
            "License requests expected at key-rotation boundaries within the prefetch lead time (live viewers x keys due)."),
        gauge("ksm_rotation_schedules_due", "Rotation schedules with a boundary within the lead time."),
        counter("ksm_rotation_keys_prefetched_total", "Next-period keys read ahead of their boundary."),
        counter("ksm_rotation_prefetch_failures_total", "Prefetch passes that failed (Redis unavailable)."),
        counter(
            "ksm_speke_requests_total",
            "SPEKE requests answered by ksm speke, by tenant (\"unauthenticated\" before the credential is accepted, \"other\" past the first 100) and outcome."
        ),
        counter("ksm_speke_keys_issued_total", "Content keys answered to packagers by ksm speke, by tenant."),
        histogram("ksm_speke_request_duration_seconds", "Time from a SPEKE request's arrival to its answer, by outcome."),
        counter("process_cpu_seconds_total", "User and system CPU time spent, in seconds."),
        gauge("process_resident_memory_bytes", "Resident memory size in bytes."),
        gauge("process_open_fds", "Open file descriptors."),
        gauge("process_max_fds", "Limit on open file descriptors."),
        gauge("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds."),
    ]

    /// Entries by name.
    package static let byName: [String: Entry] = Dictionary(entries.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
}
