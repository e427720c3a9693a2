import CoreMetrics
import KSMService
import Kafka
import Licensing
import RedisStore
import ServiceLifecycle
import Synchronization

/// Publishes a worker's figures to swift-metrics: counters, gauges and latency timers.
///
/// The hot path pays nothing for metrics: the worker counts in ``WorkerStatistics`` under one lock
/// per batch, never per job. ``publish()`` (called by `ksm serve` before each `/metrics` scrape, or
/// every few seconds by ``run()`` for an embedder whose backend pushes) reads one snapshot and hands
/// swift-metrics what changed since the last publish: counter deltas, gauge values, and latency
/// observations replayed bucket by bucket (``LatencyHistogram/replay(since:_:)``). Handlers come
/// from the factory given, by default the global `MetricsSystem.factory`, so an embedder that
/// bootstrapped its own backend gets the same series. Names, labels and help texts: ``MetricCatalog``.
///
/// Label values are bounded: status names, three classes, at most `tenant-label-limit` tenants plus
/// `other` and `unknown`, the worker's own partitions.
public final class WorkerMetrics: Service, Sendable {
    /// Everything a publish reads; each source is cheap to read from any thread.
    public struct Inputs: Sendable {
        /// The worker's counters (``WorkerStatistics/snapshot``), read once per publish.
        public var statistics: WorkerStatistics.Snapshot
        /// Whether the last store health check answered (`ksm_store_up`).
        public var storeUp: Bool
        /// False when the store holds no provisioning marker (``LicenseStore/isProvisioned()``).
        public var storeProvisioned: Bool
        /// Whether the watchdog saw the processing loop stall (``LicenseWorker/isStalled``,
        /// `ksm_processing_stalled`).
        public var stalled: Bool
        /// Per assigned partition (``KafkaConsumer/lag``).
        package var lag: [TopicPartition: Int64]
        /// Summed per class topic, and `requests` for the requests topic (``LicenseWorker/consumerLagByClass``).
        public var lagByClass: [String: Int64] = [:]
        /// Nil when the cache is off.
        package var cache: CacheStatistics?
        /// Nil until the first lease slot count finished.
        package var slots: LeaseSlotGauge.Sample?
        /// Nil when rotation prefetch is off.
        package var rotation: RotationStatus.Snapshot?
        /// Nil where `/proc` cannot be read (``ProcessSample/read()``).
        package var process: ProcessSample?

        /// Creates the inputs of one publish; what an embedder does not track keeps its default (no lag,
        /// cache, slot count, rotation or process sample: their series are not published).
        public init(
            statistics: WorkerStatistics.Snapshot, storeUp: Bool, storeProvisioned: Bool = true, stalled: Bool, lag: [TopicPartition: Int64] = [:],
            cache: CacheStatistics? = nil, slots: LeaseSlotGauge.Sample? = nil,
            rotation: RotationStatus.Snapshot? = nil, process: ProcessSample? = nil
        ) {
            self.statistics = statistics
            self.storeUp = storeUp
            self.storeProvisioned = storeProvisioned
            self.stalled = stalled
            self.lag = lag
            self.cache = cache
            self.slots = slots
            self.rotation = rotation
            self.process = process
        }
    }

    /// The classes always exported (zero included), so a dashboard's series exist before traffic.
    static let classes = ["continuity", "new", "prefetch"]
    /// What pauses together (``WorkerStatistics/Snapshot/pausedFetchClasses``): the requests topic and the class topics.
    static let fetchClasses = ["requests", "continuity", "new", "prefetch"]

    /// One series: metric name and its labels in export order.
    struct SeriesKey: Hashable {
        var name: String
        var labels: [String]
        init(_ name: String, _ labels: KeyValuePairs<String, String> = [:]) {
            self.name = name
            self.labels = labels.flatMap { [$0.key, $0.value] }
        }
        var dimensions: [(String, String)] {
            stride(from: 0, to: labels.count, by: 2).map { (labels[$0], labels[$0 + 1]) }
        }
    }

    /// What was last handed to swift-metrics, and the handlers, each created once.
    struct State {
        var counters: [SeriesKey: Counter] = [:]
        var counterValues: [SeriesKey: Int] = [:]
        var cpuSeconds: FloatingPointCounter?
        var cpuPublished: Double = 0
        var gauges: [SeriesKey: Gauge] = [:]
        var timers: [SeriesKey: Timer] = [:]
        var histograms: [SeriesKey: LatencyHistogram] = [:]
        var lagSeries: Set<SeriesKey> = []
    }

    private let factory: any MetricsFactory
    private let inputs: @Sendable () -> Inputs
    private let interval: Duration
    private let state = Mutex(State())

    /// - Parameters:
    ///   - version: the `version` label of `ksm_build_info`.
    ///   - factory: where handlers come from. Default: the bootstrapped `MetricsSystem.factory`.
    ///   - interval: how often ``run()`` publishes. Default: 5 s.
    ///   - inputs: read at each publish.
    public init(
        version: String, factory: any MetricsFactory = MetricsSystem.factory, interval: Duration = .seconds(5),
        inputs: @escaping @Sendable () -> Inputs
    ) {
        self.factory = factory
        self.inputs = inputs
        self.interval = interval
        state.withLock { state in
            self.gauge(&state, SeriesKey("ksm_build_info", ["version": version]), 1)
            // Series a dashboard or an alert's increase() needs before the first event.
            for name in [
                "ksm_jobs_received_total", "ksm_dead_letters_total", "ksm_batches_total", "ksm_store_retries_total", "ksm_reply_topic_refusals_total",
                "ksm_publish_retries_total", "ksm_consumer_pauses_total", "ksm_messages_dropped_total",
            ] {
                self.count(&state, SeriesKey(name), 0)
            }
            for source in ["consumer", "producer"] {
                for kind in KafkaError.Kind.allCases {
                    self.count(&state, SeriesKey("ksm_kafka_errors_total", ["source": source, "kind": kind.rawValue]), 0)
                }
            }
            for fetchClass in Self.fetchClasses {
                for action in ["pause", "resume"] {
                    self.count(&state, SeriesKey("ksm_fetch_switch_failures_total", ["class": fetchClass, "action": action]), 0)
                }
            }
        }
        publish()
    }

    /// Publishes every `interval` until graceful shutdown, then once more.
    public func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            publish()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
        }
        publish()
    }

    /// Hands swift-metrics what changed since the last publish. Serialized: concurrent callers wait.
    public func publish() {
        let inputs = inputs()
        state.withLock { publish(inputs, into: &$0) }
    }

    private func publish(_ inputs: Inputs, into state: inout State) {
        let s = inputs.statistics
        count(&state, SeriesKey("ksm_jobs_received_total"), s.received)
        for (status, n) in s.repliesByStatus { count(&state, SeriesKey("ksm_replies_total", ["status": status]), n) }
        for (key, n) in s.replies {
            count(&state, SeriesKey("ksm_replies_by_tenant_total", ["status": key.status, "tenant": key.tenant, "class": key.priority]), n)
        }
        count(&state, SeriesKey("ksm_dead_letters_total"), s.deadLettered)
        count(&state, SeriesKey("ksm_batches_total"), s.batches)
        count(&state, SeriesKey("ksm_store_retries_total"), s.storeRetries)
        count(&state, SeriesKey("ksm_reply_topic_refusals_total"), s.replyTopicRefusals)
        count(&state, SeriesKey("ksm_publish_retries_total"), s.publishRetries)
        count(&state, SeriesKey("ksm_consumer_pauses_total"), s.pauses)
        for (key, n) in s.fetchSwitchFailures {
            count(&state, SeriesKey("ksm_fetch_switch_failures_total", ["class": key.fetchClass, "action": key.action]), n)
        }
        for fetchClass in Set(Self.fetchClasses).union(s.pausedFetchClasses).union(s.pendingFetchSwitches) {
            gauge(&state, SeriesKey("ksm_fetch_paused", ["class": fetchClass]), s.pausedFetchClasses.contains(fetchClass) ? 1 : 0)
            gauge(&state, SeriesKey("ksm_fetch_switch_pending", ["class": fetchClass]), s.pendingFetchSwitches.contains(fetchClass) ? 1 : 0)
        }
        count(&state, SeriesKey("ksm_messages_dropped_total"), s.dropped)
        for (key, n) in s.kafkaErrors { count(&state, SeriesKey("ksm_kafka_errors_total", ["source": key.source, "kind": key.kind]), n) }
        for (key, n) in s.storeErrors { count(&state, SeriesKey("ksm_store_errors_total", ["operation": key.operation, "code": key.code]), n) }
        for priority in Set(Self.classes).union(s.endToEndLatency.keys) {
            histogram(&state, SeriesKey("ksm_job_latency_seconds", ["class": priority]), s.endToEndLatency[priority] ?? LatencyHistogram())
        }
        for priority in Set(Self.classes).union(s.batchLatency.keys) {
            histogram(&state, SeriesKey("ksm_batch_processing_seconds", ["class": priority]), s.batchLatency[priority] ?? LatencyHistogram())
        }
        gauge(&state, SeriesKey("ksm_jobs_in_flight"), Double(s.inFlight))
        for priority in Set(Self.classes).union(s.processingByClass.keys) {
            gauge(&state, SeriesKey("ksm_jobs_processing", ["class": priority]), Double(s.processingByClass[priority] ?? 0))
        }
        for priority in Set(Self.classes).union(s.queuedByClass.keys) {
            gauge(&state, SeriesKey("ksm_jobs_queued", ["class": priority]), Double(s.queuedByClass[priority] ?? 0))
        }
        // A revoked partition's lag series goes away rather than freezing at its last value.
        var lagSeries: Set<SeriesKey> = []
        for (partition, lag) in inputs.lag {
            let key = SeriesKey("ksm_consumer_lag", ["topic": partition.topic, "partition": "\(partition.partition)"])
            lagSeries.insert(key)
            gauge(&state, key, Double(lag))
        }
        for (name, lag) in inputs.lagByClass {
            let key = SeriesKey("ksm_consumer_lag_by_class", ["class": name])
            lagSeries.insert(key)
            gauge(&state, key, Double(lag))
        }
        for gone in state.lagSeries.subtracting(lagSeries) { state.gauges.removeValue(forKey: gone)?.destroy() }
        state.lagSeries = lagSeries
        if let cache = inputs.cache {
            count(&state, SeriesKey("ksm_cache_reads_total", ["result": "hit"]), cache.hits)
            count(&state, SeriesKey("ksm_cache_reads_total", ["result": "join"]), cache.joins)
            count(&state, SeriesKey("ksm_cache_reads_total", ["result": "miss"]), cache.misses)
        }
        if let slots = inputs.slots {
            gauge(&state, SeriesKey("ksm_lease_slots_in_use"), Double(slots.slots))
            gauge(&state, SeriesKey("ksm_lease_slot_accounts"), Double(slots.accounts))
            gauge(&state, SeriesKey("ksm_lease_slots_count_complete"), slots.isComplete ? 1 : 0)
        }
        if let rotation = inputs.rotation {
            gauge(&state, SeriesKey("ksm_expected_rotation_load"), Double(rotation.expectedLoad))
            gauge(&state, SeriesKey("ksm_rotation_schedules_due"), Double(rotation.dueSchedules))
            count(&state, SeriesKey("ksm_rotation_keys_prefetched_total"), rotation.keysPrefetched)
            count(&state, SeriesKey("ksm_rotation_prefetch_failures_total"), rotation.failedPasses)
        }
        gauge(&state, SeriesKey("ksm_assigned_partitions"), Double(s.assignedPartitions))
        gauge(&state, SeriesKey("ksm_store_up"), inputs.storeUp ? 1 : 0)
        gauge(&state, SeriesKey("ksm_store_provisioned"), inputs.storeProvisioned ? 1 : 0)
        gauge(&state, SeriesKey("ksm_processing_stalled"), inputs.stalled ? 1 : 0)
        if let process = inputs.process {
            let cpu = state.cpuSeconds ?? FloatingPointCounter(label: "process_cpu_seconds_total", dimensions: [], factory: factory)
            state.cpuSeconds = cpu
            if process.cpuSeconds > state.cpuPublished {
                cpu.increment(by: process.cpuSeconds - state.cpuPublished)
                state.cpuPublished = process.cpuSeconds
            }
            gauge(&state, SeriesKey("process_resident_memory_bytes"), Double(process.residentBytes))
            gauge(&state, SeriesKey("process_open_fds"), Double(process.openFileDescriptors))
            gauge(&state, SeriesKey("process_max_fds"), Double(process.maxFileDescriptors))
            gauge(&state, SeriesKey("process_start_time_seconds"), process.startTimeSeconds)
        }
    }

    /// Moves a counter to `total` (counters only grow: a smaller total publishes nothing).
    private func count(_ state: inout State, _ key: SeriesKey, _ total: Int) {
        let counter = state.counters[key] ?? Counter(label: key.name, dimensions: key.dimensions, factory: factory)
        state.counters[key] = counter
        let published = state.counterValues[key] ?? 0
        if total > published {
            counter.increment(by: total - published)
            state.counterValues[key] = total
        }
    }

    private func gauge(_ state: inout State, _ key: SeriesKey, _ value: Double) {
        let gauge = state.gauges[key] ?? Gauge(label: key.name, dimensions: key.dimensions, factory: factory)
        state.gauges[key] = gauge
        gauge.record(value)
    }

    private func histogram(_ state: inout State, _ key: SeriesKey, _ total: LatencyHistogram) {
        let timer = state.timers[key] ?? Timer(label: key.name, dimensions: key.dimensions, factory: factory)
        state.timers[key] = timer
        total.replay(since: state.histograms[key] ?? LatencyHistogram()) { timer.recordNanoseconds($0) }
        state.histograms[key] = total
    }
}
