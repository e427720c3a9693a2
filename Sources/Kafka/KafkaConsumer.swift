internal import CRdKafka
import Logging
import OwnedThreads
import Synchronization

/// A group consumer over librdkafka with manual offset storage, for at-least-once processing.
///
/// Threads: one dedicated poll thread runs `rd_kafka_consumer_poll` (and so the rebalance callback),
/// fills the bounded `events` buffer and finally leaves the group; `commit()` runs on a one-shot thread.
/// Offsets: nothing is stored automatically (`enable.auto.offset.store=false`); call `storeOffset`
/// once a job's reply was acknowledged, and auto-commit (or `commit()`) sends stored offsets.
package final class KafkaConsumer: Sendable {
    package struct Configuration: Sendable {
        /// `bootstrap.servers`.
        package var bootstrapServers: String
        /// `group.id`.
        package var groupID: String
        /// Subscribed topics (names starting with `^` are regexes, as in librdkafka).
        package var topics: [String]
        /// `auto.commit.interval.ms`; nil disables auto-commit (`enable.auto.commit=false`): call
        /// `commit()` yourself (revocations and close then commit synchronously). Default: 1 s.
        package var autoCommitInterval: Duration? = .seconds(1)
        /// Messages buffered ahead of the worker before the poll thread pauses fetching. Default: 256.
        package var eventBufferSize = 256
        /// How long a revocation waits for the worker to ask for its next event. Default: 2 s.
        package var revocationDeadline: Duration = .seconds(2)
        /// `rd_kafka_consumer_poll` timeout; bounds how quickly close and backpressure react. Default: 100 ms.
        package var pollTimeout: Duration = .milliseconds(100)
        /// nil (default): no watchdog. Otherwise a stall is reported after this long (see `Watchdog`).
        package var watchdogThreshold: Duration? = nil
        /// Called on the poll thread, once per stall; keep it short (flip a health flag, log).
        package var onStall: (@Sendable (Watchdog.Stall) -> Void)? = nil
        /// How often a thread of the consumer's own samples ``KafkaConsumer/lag`` (one watermark
        /// query per assigned partition). nil turns sampling off. Default: 2 s.
        package var lagSampleInterval: Duration? = .seconds(2)
        /// Any librdkafka property, applied last so it overrides the typed settings and the defaults
        /// (`partition.assignment.strategy=cooperative-sticky`, `auto.offset.reset=earliest`). Default: empty.
        package var properties: [String: String] = [:]

        package init(bootstrapServers: String, groupID: String, topics: [String], properties: [String: String] = [:]) {
            self.bootstrapServers = bootstrapServers
            self.groupID = groupID
            self.topics = topics
            self.properties = properties
        }
    }

    private let handle: Mutex<RdKafkaHandle?>
    private let state: ConsumerState
    private let logger: Logger

    /// Creates the consumer, subscribes and starts the poll thread.
    package init(configuration: Configuration, logger: Logger = Logger(label: "kafka.consumer")) throws(KafkaError) {
        let config = RdKafkaConfig()
        try config.set("bootstrap.servers", configuration.bootstrapServers)
        try config.set("group.id", configuration.groupID)
        try config.set("partition.assignment.strategy", "cooperative-sticky")
        try config.set("enable.auto.offset.store", "false")
        try config.set("auto.offset.reset", "earliest")
        if let interval = configuration.autoCommitInterval {
            try config.set("enable.auto.commit", "true")
            try config.set("auto.commit.interval.ms", "\(max(interval.milliseconds, 1))")
        } else {
            try config.set("enable.auto.commit", "false")
        }
        try config.set(configuration.properties)

        let watchdog = configuration.watchdogThreshold.map { Watchdog(threshold: $0) }
        let state = ConsumerState(capacity: configuration.eventBufferSize, watchdog: watchdog)
        let autoCommit =
            configuration.properties["enable.auto.commit"].map { $0 == "true" }
            ?? (configuration.autoCommitInterval != nil)
        // librdkafka refuses a mix of eager and cooperative assignors, so one cooperative name decides.
        let assignors = configuration.properties["partition.assignment.strategy"] ?? "cooperative-sticky"
        let cooperative = assignors.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "cooperative-sticky" }
        let context = ConsumerContext(
            logger: logger, state: state, autoCommit: autoCommit, cooperative: cooperative,
            revocationDeadline: configuration.revocationDeadline
        )
        config.withRaw { conf in
            rd_kafka_conf_set_rebalance_cb(conf, rebalanceTrampoline)
            // Without these, librdkafka only logs global errors (brokers down, transport) and commit
            // failures; with them they become `.error` events the service counts.
            rd_kafka_conf_set_error_cb(conf, consumerErrorTrampoline)
            rd_kafka_conf_set_offset_commit_cb(conf, offsetCommitTrampoline)
        }
        let handle = try RdKafkaHandle.make(.consumer, config: config, context: context)

        try handle.withRaw { (rk) throws(KafkaError) in
            // Everything (messages, rebalances, errors, logs queued for the app) through consumer_poll.
            let err = rd_kafka_poll_set_consumer(rk)
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: "poll_set_consumer") }
            let topics = RdKafkaTopicPartitionList(capacity: configuration.topics.count)
            for topic in configuration.topics {
                topics.add(TopicPartition(topic: topic, partition: RD_KAFKA_PARTITION_UA))
            }
            let subscribeErr = rd_kafka_subscribe(rk, topics.raw)
            guard subscribeErr == RD_KAFKA_RESP_ERR_NO_ERROR else {
                throw KafkaError(subscribeErr, context: "subscribe \(configuration.topics)")
            }
        }

        self.handle = Mutex(handle)
        self.state = state
        self.logger = logger

        let timeout = Int32(configuration.pollTimeout.milliseconds)
        let onStall = configuration.onStall
        // The thread holds the handle and the state, never `self`: dropping the consumer ends it.
        let thread = OwnedThread.start(name: "kafka-consume") {
            Self.pollLoop(handle: handle, state: state, timeout: timeout, onStall: onStall, logger: logger)
        }
        thread.detach()
        if let interval = configuration.lagSampleInterval {
            OwnedThread.start(name: "kafka-lag") {
                Self.lagLoop(handle: handle, state: state, interval: interval)
            }.detach()
        }
    }

    deinit {
        // Without close(): the poll thread leaves the group and the last handle reference destroys it.
        state.stop.set()
    }

    /// The events; iterate from one task only (see `Events`).
    package var events: Events { Events(state: state) }

    /// The same events in batches of at most `limit`; use either this or ``events``, from one task.
    package func eventBatches(limit: Int) -> EventBatches { EventBatches(state: state, limit: limit) }

    /// Consumer lag per assigned partition (high watermark minus fetch position), as last sampled
    /// (every `lagSampleInterval`); empty before the first sample, without an assignment, or with
    /// sampling off. Cheap: a lock and a copy, safe to call from a metrics scrape.
    package var lag: [TopicPartition: Int64] { state.lag }

    /// The watchdog, when `watchdogThreshold` is set; `check()` it from a health probe.
    package var watchdog: Watchdog? { state.watchdog }

    /// Marks `offset` as processed: librdkafka stores `offset + 1` (the next one to read), which the next
    /// commit sends. Pass the processed message's own offset. Throws `.state` (or an unknown-partition
    /// code) if the partition is no longer assigned: the job will be redelivered to its new owner.
    package func storeOffset(topic: String, partition: Int32, offset: Int64) throws(KafkaError) {
        let tp = TopicPartition(topic: topic, partition: partition)
        let list = RdKafkaTopicPartitionList(capacity: 1)
        list.add(tp, offset: offset + 1)
        let handle = try currentHandle()
        try handle.withRaw { (rk) throws(KafkaError) in
            let err = rd_kafka_offsets_store(rk, list.raw)
            if let error = list.firstError(context: "store offset") { throw error }
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: "store offset \(tp)") }
        }
        state.watchdog?.offsetStored(tp, offset: offset)
    }

    /// Convenience for `storeOffset(topic:partition:offset:)` with the processed message.
    package func storeOffset(for message: KafkaMessage) throws(KafkaError) {
        try storeOffset(topic: message.topic, partition: message.partition, offset: message.offset)
    }

    /// Commits the stored offsets of the current assignment and waits for the broker's answer
    /// (on a thread of its own). Nothing stored since the last commit is not an error.
    package func commit() async throws(KafkaError) {
        let handle = try currentHandle()
        let err = await OwnedThread.run(name: "kafka-commit") {
            handle.withRaw { rk in rd_kafka_commit(rk, nil, 0) }
        }
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR__NO_OFFSET else {
            throw KafkaError(err, context: "commit", kind: .commitFailed)
        }
    }

    /// Stops fetching these partitions (kept paused across backpressure pauses) until `resume`.
    /// Messages already handed out are unaffected; buffered ones still arrive.
    ///
    /// Returns the partitions librdkafka refused, with why (it sets an error per partition, e.g.
    /// `_UNKNOWN_PARTITION` for one it holds no state for, and pauses the rest); empty when it took
    /// every one. Throws when the call itself failed (the consumer is closed): nothing was paused.
    @discardableResult
    package func pause(_ partitions: [TopicPartition]) throws(KafkaError) -> [TopicPartition: KafkaError] {
        let handle = try currentHandle()
        return try handle.withRaw { (rk) throws(KafkaError) in
            try state.changeFetching(rk, { $0.pauseRequested(partitions) }, refused: { $0.pauseRefused($1) })
        }
    }

    /// Fetches these partitions again (unless backpressure currently holds the whole assignment: its
    /// own resume then includes them). Returns and throws as ``pause(_:)`` does.
    @discardableResult
    package func resume(_ partitions: [TopicPartition]) throws(KafkaError) -> [TopicPartition: KafkaError] {
        let handle = try currentHandle()
        return try handle.withRaw { (rk) throws(KafkaError) in
            try state.changeFetching(rk) { $0.resumeRequested(partitions) }
        }
    }

    /// Acknowledges the last `.revoked` event handed out: the rebalance may unassign those partitions
    /// now. Call it once the offsets of finished jobs are stored. Optional: asking for the next event
    /// acknowledges too (the implicit form), and `revocationDeadline` bounds the wait without either.
    /// Returns whether a revocation was waiting for it (false: none pending, or its `.revoked` is still
    /// buffered and so not yet yours to acknowledge).
    @discardableResult
    package func acknowledgeRevocation() -> Bool {
        state.acknowledgeRevocation()
    }

    /// The partitions currently assigned to this member.
    package func assignment() throws(KafkaError) -> [TopicPartition] {
        let handle = try currentHandle()
        return try handle.withRaw { (rk) throws(KafkaError) in
            var raw: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>? = nil
            let err = rd_kafka_assignment(rk, &raw)
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR, let raw else { throw KafkaError(err, context: "assignment") }
            return RdKafkaTopicPartitionList(taking: raw).partitions
        }
    }

    /// Each partition's log end offset (high watermark) as the broker gives it now, asked on a thread
    /// of its own (`rd_kafka_query_watermark_offsets` blocks). A partition the broker did not answer
    /// for within `timeout` is left out; a closed consumer answers nothing.
    package func logEndOffsets(_ partitions: [TopicPartition], timeout: Duration = .seconds(2)) async -> [TopicPartition: Int64] {
        guard !partitions.isEmpty, let handle = try? currentHandle() else { return [:] }
        let ms = Int32(clamping: timeout.milliseconds)
        return await OwnedThread.run(name: "kafka-log-end") {
            handle.withRaw { rk in
                var ends: [TopicPartition: Int64] = [:]
                for partition in partitions {
                    var low: Int64 = -1
                    var high: Int64 = -1
                    let err = partition.topic.withCString { rd_kafka_query_watermark_offsets(rk, $0, partition.partition, &low, &high, ms) }
                    if err == RD_KAFKA_RESP_ERR_NO_ERROR, high >= 0 { ends[partition] = high }
                }
                return ends
            }
        }
    }

    /// Leaves the group gracefully: the poll thread stops, `rd_kafka_consumer_close` revokes the
    /// assignment (a final `.revoked` event, not waited for) and commits stored offsets, `events`
    /// ends, and the client is destroyed. Store offsets of finished jobs before calling. Idempotent.
    ///
    /// Returns false when leaving took longer than `timeout`: librdkafka can wait for ever for a
    /// coordinator that is gone (confluentinc/librdkafka#3740). The caller goes on; the poll thread
    /// stays inside librdkafka and destroys the client if that call ever returns.
    @discardableResult
    package func close(timeout: Duration = .seconds(60)) async -> Bool {
        state.stop.set()
        let finished = await state.waitUntilFinished(timeout: timeout)
        if !finished {
            logger.warning("kafka consumer: leaving the group did not finish in time; going on without it", metadata: ["timeout": "\(timeout)"])
        }
        guard let owner = handle.withLock({ $0.take() }).map(LastReference.init) else { return finished }
        // Normally the last reference: destroy on a thread of ours, not the cooperative pool.
        await OwnedThread.run(name: "kafka-destroy") { owner.drop() }
        return finished
    }

    private func currentHandle() throws(KafkaError) -> RdKafkaHandle {
        guard let handle = handle.withLock({ $0 }) else { throw KafkaError.closed() }
        return handle
    }

    /// Test hook: messages buffered and not yet handed out.
    var bufferedMessageCount: Int { state.bufferedMessages }
}

/// Pauses or resumes `partitions` in librdkafka; returns those it refused, with why. A refusal is per
/// partition (librdkafka sets each element's error and switches the others), so one refused partition
/// says nothing about the rest; a failed call (none in 2.0.2, which always answers `NO_ERROR`) throws.
func setPaused(_ rk: OpaquePointer, _ partitions: [TopicPartition], paused: Bool) throws(KafkaError) -> [TopicPartition: KafkaError] {
    guard !partitions.isEmpty else { return [:] }
    let list = RdKafkaTopicPartitionList(partitions)
    let err = paused ? rd_kafka_pause_partitions(rk, list.raw) : rd_kafka_resume_partitions(rk, list.raw)
    let what = paused ? "pause" : "resume"
    guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: what) }
    return list.errors(context: what)
}
