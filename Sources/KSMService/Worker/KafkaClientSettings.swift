import Kafka

/// The worker's two Kafka clients configured from one ``WorkerConfiguration``: its typed settings and
/// ``WorkerConfiguration/kafkaProperties``, which are meant for both clients.
///
/// librdkafka warns at start-up about every property that belongs to the other kind of client
/// ("session.timeout.ms is a consumer property and will be ignored by this producer instance"), so
/// each client gets the pass-through properties less those only the other kind reads. The lists
/// follow librdkafka's CONFIGURATION.md (the `C` and `P` columns); a property on neither list goes
/// to both, since librdkafka may read it in either.
struct KafkaClientSettings: Sendable {
    let configuration: WorkerConfiguration

    /// Properties only a consumer reads (global and topic level). Default-free: nothing is set here.
    static let consumerOnlyProperties: Set<String> = [
        "group.id", "group.instance.id", "partition.assignment.strategy", "session.timeout.ms", "heartbeat.interval.ms",
        "group.protocol.type", "group.protocol", "group.remote.assignor", "coordinator.query.interval.ms", "max.poll.interval.ms",
        "enable.auto.commit", "auto.commit.interval.ms", "enable.auto.offset.store", "queued.min.messages", "queued.max.messages.kbytes",
        "fetch.wait.max.ms", "fetch.queue.backoff.ms", "fetch.message.max.bytes", "max.partition.fetch.bytes", "fetch.max.bytes",
        "fetch.min.bytes", "fetch.error.backoff.ms", "offset.store.method", "isolation.level", "enable.partition.eof", "check.crcs",
        "consume.callback.max.messages", "auto.commit.enable", "auto.offset.reset", "offset.store.path", "offset.store.sync.interval.ms",
    ]

    /// Properties only a producer reads (global and topic level).
    static let producerOnlyProperties: Set<String> = [
        "transactional.id", "transaction.timeout.ms", "enable.idempotence", "enable.gapless.guarantee", "queue.buffering.max.messages",
        "queue.buffering.max.kbytes", "queue.buffering.max.ms", "linger.ms", "message.send.max.retries", "retries",
        "queue.buffering.backpressure.threshold", "compression.codec", "compression.type", "batch.num.messages", "batch.size",
        "delivery.report.only.error", "sticky.partitioning.linger.ms", "request.required.acks", "acks", "request.timeout.ms",
        "message.timeout.ms", "delivery.timeout.ms", "queuing.strategy", "partitioner", "compression.level",
    ]

    /// The request topics' consumer: low fetch latency, the worker's in-flight bound, the watchdog
    /// reporting to `onStall`, and stored offsets committed every ``WorkerConfiguration/commitInterval``.
    func consumer(topics: RequestTopics, onStall: @escaping @Sendable (KafkaConsumer.Watchdog.Stall) -> Void) -> KafkaConsumer.Configuration {
        // A license request is latency-bound: don't let the broker hold a fetch for librdkafka's 500 ms default.
        var properties = ["fetch.wait.max.ms": "10", "fetch.error.backoff.ms": "50"].merging(passThrough(droppingAll: Self.producerOnlyProperties)) {
            _, configured in
            configured
        }
        if let instance = configuration.instanceID { properties["group.instance.id"] = instance }
        var c = KafkaConsumer.Configuration(
            bootstrapServers: configuration.brokers, groupID: configuration.groupID, topics: topics.all, properties: properties)
        // The worker bounds its own in-flight work (and pauses for it); a consumer buffer smaller than
        // that would pause and resume partitions on every burst, and librdkafka resumes slowly.
        c.eventBufferSize = max(c.eventBufferSize, configuration.maximumInFlight * 2)
        c.watchdogThreshold = configuration.watchdogThreshold
        // Stored offsets are committed within `commitInterval` (auto-commit; librdkafka sends nothing
        // when no stored offset moved), so a departure rebalance that refuses the final commit finds
        // little or nothing left to commit.
        if configuration.commitInterval > .zero { c.autoCommitInterval = configuration.commitInterval }
        c.onStall = onStall
        return c
    }

    /// The replies' producer: `linger.ms` 1 (a reply waits for no batch), producer errors to `onError`.
    func producer(onError: @escaping @Sendable (KafkaError) -> Void) -> KafkaProducer.Configuration {
        var c = KafkaProducer.Configuration(bootstrapServers: configuration.brokers)
        c.properties = ["linger.ms": "1"].merging(passThrough(droppingAll: Self.consumerOnlyProperties)) { _, configured in configured }
        c.onError = onError
        return c
    }

    private func passThrough(droppingAll names: Set<String>) -> [String: String] {
        configuration.kafkaProperties.filter { !names.contains($0.key) }
    }
}
