internal import CRdKafka
import Logging
import OwnedThreads
import Synchronization

/// A consumer of one topic's partitions by plain assignment: no group membership, no rebalances, no
/// offsets stored or committed. It reads from where ``assignAtEnd(timeout:)`` placed it, the log end
/// at that moment, so nothing produced before is ever read: for a reply topic that only the
/// process that asked reads (the edge's), where an old record is an answer to nobody.
///
/// Threads: one dedicated poll thread runs `rd_kafka_consumer_poll` and hands each record to
/// `onMessage` on that thread (keep it short: a table lookup, a continuation resumed). The metadata
/// and watermark queries of ``assignAtEnd(timeout:)`` block, so they run on a one-shot thread.
///
/// librdkafka's `rd_kafka_assign` and `rd_kafka_poll_set_consumer` need a `group.id` to exist; the
/// group is never joined (nothing subscribes) and nothing is committed (`enable.auto.commit=false`,
/// `enable.auto.offset.store=false`).
package final class KafkaAssignedConsumer: Sendable {
    package struct Configuration: Sendable {
        /// `bootstrap.servers`.
        package var bootstrapServers: String
        /// The one topic read; every partition is assigned.
        package var topic: String
        /// `rd_kafka_consumer_poll` timeout; bounds how quickly `close` stops. Default: 100 ms.
        package var pollTimeout: Duration = .milliseconds(100)
        /// Any librdkafka property (security, `fetch.wait.max.ms`), applied after the defaults. The
        /// commit settings are applied after these: this consumer never commits. Default: empty.
        package var properties: [String: String] = [:]

        package init(bootstrapServers: String, topic: String, properties: [String: String] = [:]) {
            self.bootstrapServers = bootstrapServers
            self.topic = topic
            self.properties = properties
        }
    }

    private let handle: Mutex<RdKafkaHandle?>
    private let stop = StopFlag()
    private let finished: Mutex<OwnedThread?>
    private let topic: String
    private let logger: Logger

    /// Creates the client and starts the poll thread; nothing is read until ``assignAtEnd(timeout:)``.
    /// - Parameter onMessage: called on the poll thread with each record, in partition order.
    /// - Parameter onError: called on the poll thread with each error librdkafka reports while
    ///   consuming (a partition's fetch failing, a broker down); default: logged at debug only.
    package init(
        configuration: Configuration, logger: Logger = Logger(label: "kafka.assigned-consumer"),
        onError: (@Sendable (KafkaError) -> Void)? = nil, onMessage: @escaping @Sendable (KafkaMessage) -> Void
    ) throws(KafkaError) {
        let config = RdKafkaConfig()
        try config.set("bootstrap.servers", configuration.bootstrapServers)
        // Never joined: present because librdkafka's assign and consumer-poll API require one.
        try config.set("group.id", "ksm-assigned-\(UInt64.random(in: 0...UInt64.max))")
        try config.set("enable.partition.eof", "false")
        try config.set(configuration.properties)
        try config.set("enable.auto.commit", "false")
        try config.set("enable.auto.offset.store", "false")
        let handle = try RdKafkaHandle.make(.consumer, config: config, context: RdKafkaContext(logger: logger))
        try handle.withRaw { (rk) throws(KafkaError) in
            let err = rd_kafka_poll_set_consumer(rk)
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: "poll_set_consumer") }
        }
        self.handle = Mutex(handle)
        self.topic = configuration.topic
        self.logger = logger
        let stop = self.stop
        let timeout = Int32(clamping: configuration.pollTimeout.milliseconds)
        // The thread holds the handle, never `self`.
        let thread = OwnedThread.start(name: "kafka-assigned") {
            handle.withRaw { rk in
                while !stop.isSet {
                    guard let message = rd_kafka_consumer_poll(rk, timeout) else { continue }
                    let event = KafkaConsumer.event(from: message)
                    rd_kafka_message_destroy(message)
                    switch event {
                    case .message(let record)?: onMessage(record)
                    case .error(let error)?:
                        if let onError { onError(error) } else { logger.debug("kafka assigned consumer: \(error)") }
                    default: break
                    }
                }
            }
        }
        self.finished = Mutex(thread)
    }

    deinit {
        stop.set()
        finished.withLock { $0.take() }?.detach()
    }

    /// Assigns every partition of the topic at its log end offset as the broker gives it now, and
    /// returns those offsets: a record produced after this returns is read, none before. Asks the
    /// metadata (partition count) and each partition's high watermark on a thread of its own.
    /// Throws when the topic is unknown, a watermark cannot be read within `timeout`, or the
    /// assignment is refused.
    @discardableResult
    package func assignAtEnd(timeout: Duration = .seconds(10)) async throws(KafkaError) -> [TopicPartition: Int64] {
        guard let handle = handle.withLock({ $0 }) else { throw KafkaError.closed() }
        let ms = Int32(clamping: timeout.milliseconds)
        let topic = self.topic
        let result: Result<[TopicPartition: Int64], KafkaError> = await OwnedThread.run(name: "kafka-assign") {
            handle.withRaw { rk in
                guard let rkt = rd_kafka_topic_new(rk, topic, nil) else {
                    return .failure(KafkaError(code: .configuration, message: "topic \(topic): rd_kafka_topic_new failed", isRetriable: false))
                }
                defer { rd_kafka_topic_destroy(rkt) }
                var metadata: UnsafePointer<rd_kafka_metadata>?
                let err = rd_kafka_metadata(rk, 0, rkt, &metadata, ms)
                guard err == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else { return .failure(KafkaError(err, context: "metadata for \(topic)")) }
                defer { rd_kafka_metadata_destroy(metadata) }
                guard metadata.pointee.topic_cnt == 1, metadata.pointee.topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR,
                    metadata.pointee.topics[0].partition_cnt > 0
                else {
                    let topicErr = metadata.pointee.topic_cnt == 1 ? metadata.pointee.topics[0].err : RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC
                    return .failure(KafkaError(topicErr, context: "metadata for \(topic)"))
                }
                let count = metadata.pointee.topics[0].partition_cnt
                var ends: [TopicPartition: Int64] = [:]
                let list = RdKafkaTopicPartitionList(capacity: Int(count))
                for partition in 0..<count {
                    var low: Int64 = -1
                    var high: Int64 = -1
                    let err = rd_kafka_query_watermark_offsets(rk, topic, partition, &low, &high, ms)
                    guard err == RD_KAFKA_RESP_ERR_NO_ERROR, high >= 0 else {
                        return .failure(KafkaError(err, context: "log end offset of \(topic)[\(partition)]"))
                    }
                    let tp = TopicPartition(topic: topic, partition: partition)
                    ends[tp] = high
                    list.add(tp, offset: high)
                }
                let assignErr = rd_kafka_assign(rk, list.raw)
                guard assignErr == RD_KAFKA_RESP_ERR_NO_ERROR else { return .failure(KafkaError(assignErr, context: "assign \(topic)")) }
                return .success(ends)
            }
        }
        return try result.get()
    }

    /// Stops the poll thread, unassigns and destroys the client, on threads of ours. Idempotent.
    package func close() async {
        stop.set()
        let thread = finished.withLock { $0.take() }
        guard let owner = handle.withLock({ $0.take() }).map(LastReference.init) else { return }
        await OwnedThread.run(name: "kafka-assigned-close") {
            thread?.join()
            owner.withValue { handle in
                handle.withRaw { rk in
                    _ = rd_kafka_assign(rk, nil)
                    _ = rd_kafka_consumer_close(rk)
                }
            }
            owner.drop()
        }
        logger.debug("kafka assigned consumer closed", metadata: ["topic": "\(topic)"])
    }
}
