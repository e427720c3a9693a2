/// How a KSM worker talks to Kafka and sizes its work. Plain values with documented defaults.
public struct WorkerConfiguration: Sendable {
    /// `host:port,...` of the Kafka bootstrap brokers.
    public var brokers: String
    /// Consumer group of the fleet. Default: `fps-ksm`.
    public var groupID = "fps-ksm"
    /// Default: `fps.license.requests`.
    public var requestsTopic = "fps.license.requests"
    /// Also consume one topic per priority class, `<requestsTopic>.continuity`, `.new` and
    /// `.prefetch` (``RequestTopics``), so a lower class waits in Kafka rather than in front of a
    /// higher one; the topic decides a job's class. The requests topic itself is still read (its
    /// jobs' `priority` field decides). Default: false (the class topics must exist).
    public var classTopics = false
    /// Where replies go unless a request names its own allowed `reply-topic` header. Default: `fps.license.replies`.
    public var repliesTopic = "fps.license.replies"
    /// Which `reply-topic` headers a job may name besides ``repliesTopic``, which is always allowed
    /// (``ReplyTopicPolicy``). Default: nil, ``ReplyTopicPolicy/defaultPolicy(repliesTopic:)``: the
    /// replies topic and every topic below `<repliesTopic>.`.
    public var replyTopics: ReplyTopicPolicy?
    /// ``replyTopics``, or the default for the current ``repliesTopic``.
    public var replyTopicPolicy: ReplyTopicPolicy { replyTopics ?? .defaultPolicy(repliesTopic: repliesTopic) }
    /// Messages that cannot be read as a job at all. Default: `fps.license.dlq`.
    public var deadLetterTopic = "fps.license.dlq"
    /// Largest batch handed to the processor (one Redis round trip each). Default: 128: against 64,
    /// about 6 µs less worker CPU per job in a pinned join-heavy storm (docs/performance.md).
    public var maximumBatchSize = 128
    /// Batches processed at once, so Redis round trips and delivery reports overlap CPU work.
    /// Default: 8, ``concurrentBatches(forCryptoThreads:)`` of two threads (`ksm serve` sizes it
    /// from its `--crypto-threads`).
    public var concurrentBatches = 8

    /// Four batches per crypto thread, at least 4 and at most 1,024: fewer leave the crypto pool
    /// idle while every batch waits on Redis or Kafka.
    public static func concurrentBatches(forCryptoThreads threads: Int) -> Int {
        min(max(4, 4 * threads), 1_024)
    }
    /// Jobs buffered or in flight before the consumer pauses its partitions. Default: 16384: above a
    /// whole rotation storm of one worker's partitions, so the scheduler sees the storm to order it, and
    /// because librdkafka 2.0.2 takes up to a second to resume a paused partition (a few KB per job).
    public var maximumInFlight = 16_384
    /// Static membership (`group.instance.id`), e.g. a StatefulSet pod name. Default: none.
    public var instanceID: String?
    /// librdkafka properties passed through to both clients (SASL, TLS, linger, batch sizes).
    public var kafkaProperties: [String: String] = [:]
    /// A processing loop with no progress for this long is reported as stalled. Default: 30 s.
    public var watchdogThreshold: Duration = .seconds(30)
    /// Priority classes, tenant weights and load shedding (docs/scheduling.md).
    public var scheduling = SchedulingPolicy()
    /// The whole of a graceful shutdown, from SIGTERM to leaving the group: in-flight work gets
    /// what remains after a reserve for the final commit, leaving the group and flushing the
    /// producer; what is not done by then is left for redelivery. Keep it below the orchestrator's
    /// grace period (Kubernetes' `terminationGracePeriodSeconds`, 30 s by default). Default: 25 s.
    public var shutdownTimeout: Duration = .seconds(25)
    /// Stored offsets are committed at most this long after a batch stores them: librdkafka's
    /// `auto.commit.interval.ms` (a `kafka-properties` entry wins); zero keeps the consumer's
    /// default (1 s). Default: 50 ms (at most 20 commits a second, only when offsets moved).
    public var commitInterval: Duration = .milliseconds(50)
    /// The largest request value a worker reads: a larger message is refused before any decoding and
    /// dead-lettered (cut to this size, see ``DeadLetterRecord``). At most
    /// `LicenseJob.maximumEncodedSize` (the decoder's own cap). Default: 256 KiB.
    public var maximumRequestBytes = LicenseJob.maximumEncodedSize
    /// Tenants that get their own `tenant` label on `ksm_replies_by_tenant_total`; later ones are
    /// counted as `other` (``TenantLabels``). Default: 20.
    public var tenantLabelLimit = 20
    /// Open a span per job through the bootstrapped `InstrumentationSystem` tracer (``JobTracing``).
    /// W3C `traceparent`/`tracestate` headers are copied to the reply either way. Default: false.
    public var tracing = false

    /// A configuration for the given Kafka bootstrap servers (`host:port`, comma-separated), with the
    /// defaults documented on each property.
    public init(brokers: String) { self.brokers = brokers }

    /// librdkafka's default `message.max.bytes`, the producer's largest record.
    static let producerDefaultMessageMaxBytes = 1_000_000

    /// What a dead letter may carry: the value cut to ``maximumRequestBytes`` and to the producer's
    /// `message.max.bytes` (from ``kafkaProperties``, else librdkafka's 1,000,000) less 64 KiB for
    /// headers, key and framing, so the dead letter itself is never refused for its size.
    var deadLetterLimits: DeadLetterRecord.Limits {
        let producerLimit = kafkaProperties["message.max.bytes"].flatMap { Int($0) } ?? Self.producerDefaultMessageMaxBytes
        var limits = DeadLetterRecord.Limits()
        limits.valueBytes = max(0, min(maximumRequestBytes, producerLimit - 64 * 1024))
        return limits
    }
}
