import Kafka
import Synchronization
import Wire

/// Counters a worker keeps for logs, tests, the loadgen summary and `/metrics`.
///
/// One `Mutex` around a value: the worker updates it once per event batch or reply batch (never per
/// job), and a scrape copies it. Gauges that live elsewhere (consumer lag, cache counters, lease
/// slots) are read at scrape time by ``WorkerMetrics``.
public final class WorkerStatistics: Sendable {
    /// One reply series: status name, bounded tenant label (``TenantLabels``) and priority class.
    /// Equal, hashed and ordered by the fields' bytes, as Prometheus tells label values apart.
    public struct ReplyKey: Sendable, Hashable, Comparable {
        /// The reply's status name (Apple's or the project's code).
        public var status: String
        /// The tenant label: the tenant's ID, or `other` past the label limit, or `unknown`.
        public var tenant: String
        /// The job's priority class (`continuity`, `new`, `prefetch`).
        public var priority: String

        public static func == (a: ReplyKey, b: ReplyKey) -> Bool {
            ByteKey.equal(a.status, b.status) && ByteKey.equal(a.tenant, b.tenant) && ByteKey.equal(a.priority, b.priority)
        }

        public func hash(into hasher: inout Hasher) {
            ByteKey.hash(status, into: &hasher)
            ByteKey.hash(tenant, into: &hasher)
            ByteKey.hash(priority, into: &hasher)
        }

        public static func < (a: ReplyKey, b: ReplyKey) -> Bool {
            (ByteKey(a.status), ByteKey(a.tenant), ByteKey(a.priority)) < (ByteKey(b.status), ByteKey(b.tenant), ByteKey(b.priority))
        }
    }

    /// The counters at one moment, a copy; counts run from the worker's start.
    public struct Snapshot: Sendable, Hashable {
        /// Request messages read from Kafka.
        public var received = 0
        /// Replies whose delivery Kafka confirmed.
        public var replied = 0
        /// Messages published to the dead-letter topic rather than answered with a reply (an undecodable or
        /// oversized request, or a reply Kafka refused for good), once delivered.
        public var deadLettered = 0
        /// Batches the worker processed.
        public var batches = 0
        /// Batches processed again after a retriable store failure, each attempt once.
        public var storeRetries = 0
        /// Jobs refused because their `reply-topic` header named a topic outside ``ReplyTopicPolicy``.
        public var replyTopicRefusals = 0
        /// Replies and dead letters published again after a failed delivery.
        public var publishRetries = 0
        /// Times the worker paused fetching one or more request classes, for backpressure.
        public var pauses = 0
        /// Partitions this worker owns now; readiness means at least one.
        public var assignedPartitions = 0
        /// Assignment changes seen (each assigned or revoked event, an empty first assignment
        /// included): a count that stops moving tells a test or a benchmark the group has settled.
        public var partitionChanges = 0
        /// Replies published, by status name (low cardinality: Apple's and the project's codes).
        public var repliesByStatus: [String: Int] = [:]
        /// Replies published by status, tenant (bounded) and priority class.
        public var replies: [ReplyKey: Int] = [:]
        /// Job received from Kafka -> reply delivery report, per priority class.
        package var endToEndLatency: [String: LatencyHistogram] = [:]
        /// Processing time of one batch (decode to CKCs, store round trips included), per the class
        /// of the batch's first job (the scheduler hands out classes in order, so batches are mostly
        /// of one class).
        package var batchLatency: [String: LatencyHistogram] = [:]
        /// Jobs taken by a batch and not yet delivered, per class.
        public var processingByClass: [String: Int] = [:]
        /// Jobs waiting in the scheduler, per class (updated as jobs arrive and leave).
        public var queuedByClass: [String: Int] = [:]
        /// Kafka errors by where they happened (`consumer`: error events, offset resets, commit
        /// failures; `producer`: failed deliveries, each counted once per attempt, and global errors)
        /// and by kind (``KafkaError/Kind``), so an operator can alert on lost progress.
        public var kafkaErrors: [KafkaErrorKey: Int] = [:]
        /// How the shutdown's final commit ended: true once committed, false once given up or failed
        /// for good (the jobs answered since the last auto-commit are then redelivered); nil before.
        package var finalCommitSucceeded: Bool?
        /// Messages whose answer could not be published even as a headers-only dead letter: logged
        /// at error and given up on, so the partition moves on.
        public var dropped = 0
        /// Store (Redis) errors by operation (`fetch`, `lease`, `ping`, ...) and error code.
        public var storeErrors: [StoreErrorKey: Int] = [:]
        /// Pauses and resumes of request topics that librdkafka did not take (the call failed, or it
        /// refused a partition), by fetch class and action, each attempt once. The worker makes the
        /// switch again on every update and at least every ``WorkerState/fetchRetryInterval`` until
        /// it takes, so a count that keeps growing is a switch that keeps failing (docs/scheduling.md).
        package var fetchSwitchFailures: [FetchSwitchKey: Int] = [:]
        /// Fetch classes (`requests`, `continuity`, `new`, `prefetch`) librdkafka has paused on every
        /// assigned partition.
        public var pausedFetchClasses: Set<String> = []
        /// Fetch classes whose decided pause or resume librdkafka has not taken yet: being retried.
        public var pendingFetchSwitches: Set<String> = []
        /// Assigns tenant label values; part of the snapshot so it changes under the same lock.
        var tenantLabels = TenantLabels()

        /// Jobs received and not yet answered or dead-lettered (revoked ones included until redone).
        public var inFlight: Int { max(0, received - replied - deadLettered - dropped) }

        /// Counts one Kafka error.
        mutating func kafkaError(_ source: String, _ kind: KafkaError.Kind, count: Int = 1) {
            kafkaErrors[KafkaErrorKey(source: source, kind: kind.rawValue), default: 0] += count
        }
    }

    /// One Kafka error series: `source` (`consumer`, `producer`) and `kind` (``KafkaError/Kind``).
    public struct KafkaErrorKey: Sendable, Hashable, Comparable {
        /// Where the error happened: `consumer` or `producer`.
        public var source: String
        /// The error's kind: `offset_reset`, `commit_failed`, `brokers_down`, `transport`, `timed_out`, ...
        public var kind: String
        public static func < (a: KafkaErrorKey, b: KafkaErrorKey) -> Bool { (a.source, a.kind) < (b.source, b.kind) }
    }

    /// One store error series.
    public struct StoreErrorKey: Sendable, Hashable, Comparable {
        /// The store operation that failed (`fetch`, `lease`, `ping`, ...).
        public var operation: String
        /// The `LicenseStoreError.Code` or Redis error code, as text.
        public var code: String
        public static func < (a: StoreErrorKey, b: StoreErrorKey) -> Bool { (a.operation, a.code) < (b.operation, b.code) }
    }

    private let state: Mutex<Snapshot>

    /// - Parameter tenantLabelLimit: tenants that get their own `tenant` label value (default 20).
    public init(tenantLabelLimit: Int = 20) {
        var initial = Snapshot()
        initial.tenantLabels = TenantLabels(limit: tenantLabelLimit)
        state = Mutex(initial)
    }

    /// A copy of the counters, taken under the lock.
    public var snapshot: Snapshot { state.withLock { $0 } }

    func update(_ change: (inout Snapshot) -> Void) { state.withLock { change(&$0) } }

    /// Counts one store error; called by ``MeteredLicenseStore`` and the health check.
    public func storeError(operation: String, code: String) {
        state.withLock { $0.storeErrors[StoreErrorKey(operation: operation, code: code), default: 0] += 1 }
    }
}
