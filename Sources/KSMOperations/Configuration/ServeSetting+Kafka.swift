import KSMService

/// The worker's own defaults, so a `ksm serve` default and an embedder's cannot drift apart.
private let workerDefaults = WorkerConfiguration(brokers: "")

extension ServeSetting {
    package static let brokers = ServeSetting(
        "brokers", env: "KSM_KAFKA_BROKERS", .string(default: nil), required: true, example: "kafka-0:9092,kafka-1:9092",
        help: "Kafka bootstrap servers.")
    package static let group = ServeSetting(
        "group", env: "KSM_KAFKA_GROUP", .string(default: workerDefaults.groupID), help: "Consumer group.")
    package static let requestsTopic = ServeSetting(
        "requests-topic", env: "KSM_REQUESTS_TOPIC", .string(default: workerDefaults.requestsTopic), help: "Requests topic.")
    package static let classTopics = ServeSetting(
        "class-topics", env: "KSM_CLASS_TOPICS", .boolean(default: workerDefaults.classTopics),
        help:
            "Also read one requests topic per priority class, <requests-topic>.continuity, .new and .prefetch: continuity is fetched and answered first, new sessions next, prefetch with spare capacity (docs/scheduling.md)."
    )
    package static let repliesTopic = ServeSetting(
        "replies-topic", env: "KSM_REPLIES_TOPIC", .string(default: workerDefaults.repliesTopic), help: "Replies topic.")
    package static let dlqTopic = ServeSetting(
        "dlq-topic", env: "KSM_DLQ_TOPIC", .string(default: workerDefaults.deadLetterTopic), help: "Dead-letter topic.")
    package static let replyTopics = ServeSetting(
        "reply-topics", flag: .option("reply-topic"), env: "KSM_REPLY_TOPICS", .stringList,
        default: "the replies topic and <replies topic>.*",
        help:
            "A topic a job's reply-topic header may name: a topic, a prefix ending in *, or TENANT:PATTERN for one tenant (who is then limited to its own entries); repeatable. The replies topic is always allowed."
    )
    package static let instanceID = ServeSetting(
        "instance-id", env: "KSM_INSTANCE_ID", .string(default: nil), help: "Static membership group.instance.id, e.g. the pod name.")
    package static let kafkaProperties = ServeSetting(
        "kafka-properties", flag: .option("kafka-property"), env: "KSM_KAFKA_PROPERTIES", .map(.librdkafkaProperties),
        help:
            "librdkafka KEY=VALUE passed through; repeatable. Never a secret: every user of the host can read a process's arguments; use --kafka-property-file."
    )
    /// Secrets for librdkafka (SASL passwords, OAuth client secrets) as files: never in argv or the environment.
    package static let kafkaPropertyFiles = ServeSetting(
        "kafka-property-files", flag: .option("kafka-property-file"), env: "KSM_KAFKA_PROPERTY_FILES", .map(.strings),
        help:
            "librdkafka NAME=PATH: the property's value is the file's content (less one trailing line break), read as a secret file (mode 600, or 0440 with the pod's group); for SASL passwords and other secrets, which never belong in arguments or the environment; repeatable."
    )
    package static let maxBatchSize = ServeSetting(
        "max-batch-size", env: "KSM_MAX_BATCH_SIZE", .integer(1...100_000, default: workerDefaults.maximumBatchSize),
        help: "Largest batch (one Redis round trip each).")
    package static let maxInFlight = ServeSetting(
        "max-in-flight", env: "KSM_MAX_IN_FLIGHT", .integer(1...10_000_000, default: workerDefaults.maximumInFlight),
        help: "Jobs in flight before the consumer pauses.")
    package static let maxRequestBytes = ServeSetting(
        "max-request-bytes", env: "KSM_MAX_REQUEST_BYTES", .integer(1_024...LicenseJob.maximumEncodedSize, default: workerDefaults.maximumRequestBytes),
        help: "Largest request message in bytes; a larger one is dead-lettered (cut to this size) before any work.")
    package static let shutdownTimeout = ServeSetting(
        "shutdown-timeout", env: "KSM_SHUTDOWN_TIMEOUT", .duration(.seconds(1, included: true, 3_600), default: workerDefaults.shutdownTimeout),
        help:
            "Seconds from SIGTERM until the worker has left its group: in-flight work, the final commit and leaving; keep it below the orchestrator's grace period."
    )
}
