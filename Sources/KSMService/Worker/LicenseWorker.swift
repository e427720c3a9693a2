import Kafka
import Logging
import ServiceLifecycle
import Synchronization

/// A KSM worker: consumes license jobs from Kafka, answers each through the ``LicenseProcessor`` and
/// publishes the reply, storing a job's offset only after its reply's delivery report (at-least-once).
///
/// Stages, each a type of its own: read (``JobReader``) -> schedule (``WorkerState``) -> answer
/// (``JobAnswerer``, in ``BatchLoop``s) -> publish (``ReplyPublisher``) -> settle (``JobSettler``).
/// Graceful shutdown (SIGTERM through ServiceLifecycle) stops reading, drains what is in flight,
/// commits and leaves the group (``ShutdownSequence``), all within ``WorkerConfiguration/shutdownTimeout``.
public final class LicenseWorker: Service, Sendable {
    /// The settings the worker runs with: Kafka, topics, batching, scheduling, shutdown.
    public let configuration: WorkerConfiguration
    /// Answers each batch of jobs.
    public let processor: LicenseProcessor
    /// The worker's counters; read a ``WorkerStatistics/snapshot`` at any time, from any thread.
    public let statistics: WorkerStatistics
    let logger: Logger
    /// Where answers go and the records that carry them.
    let routing: ReplyRouting
    let answerer: JobAnswerer
    let clients: KafkaClientSettings
    private let stall = StallRecord()
    /// The running consumer, for the lag gauge; nil before `run` and after it.
    private let consumer = Mutex<KafkaConsumer?>(nil)

    /// - Parameter statistics: pass one to share it with what wraps the store (``MeteredLicenseStore``);
    ///   default: a new one with `configuration.tenantLabelLimit`.
    public init(configuration: WorkerConfiguration, processor: LicenseProcessor, logger: Logger, statistics: WorkerStatistics? = nil) {
        let statistics = statistics ?? WorkerStatistics(tenantLabelLimit: configuration.tenantLabelLimit)
        self.configuration = configuration
        self.statistics = statistics
        self.processor = processor
        self.logger = logger
        routing = ReplyRouting(configuration: configuration)
        answerer = JobAnswerer(processor: processor, routing: routing, statistics: statistics)
        clients = KafkaClientSettings(configuration: configuration)
    }

    /// Reads, answers and publishes until graceful shutdown (which drains, commits and leaves the group
    /// within ``WorkerConfiguration/shutdownTimeout``) or cancellation. Run it in a `ServiceGroup`.
    /// - Throws: A Kafka error when the consumer or the producer cannot be created (an invalid
    ///   property, say).
    public func run() async throws {
        let (logger, statistics, stall, topics) = (self.logger, self.statistics, self.stall, requestTopics)
        let consumer = try KafkaConsumer(
            configuration: clients.consumer(topics: topics) { verdict in
                logger.error("processing loop stalled: no offset progress with messages outstanding", metadata: ["stall": "\(verdict)"])
                stall.record(verdict)
            }, logger: logger)
        let producer = try KafkaProducer(
            configuration: clients.producer { error in statistics.update { $0.kafkaError("producer", error.kind) } }, logger: logger)
        let state = makeState(consumer: consumer, topics: topics)
        self.consumer.withLock { $0 = consumer }
        defer { self.consumer.withLock { $0 = nil } }
        for (topic, error) in await producer.warmUp(topics: [configuration.repliesTopic, configuration.deadLetterTopic]) {
            // Not fatal (librdkafka keeps trying, and /readyz stays 503 without partitions), but said
            // plainly within seconds: an unreachable broker is otherwise silent.
            logger.error(
                "cannot reach Kafka at \(configuration.brokers) yet: no metadata for topic \(topic) within 5 s (\(error.code)); retrying, not ready until it answers",
                metadata: ["topic": "\(topic)"])
        }
        logger.info("worker started", metadata: ["group": "\(configuration.groupID)", "topics": "\(topics.all.joined(separator: ","))"])

        let reader = JobReader(
            consumer: consumer, state: state, statistics: statistics, logger: logger, eventLimit: max(configuration.maximumBatchSize, 256))
        let loop = BatchLoop(
            state: state, answerer: answerer,
            publisher: ReplyPublisher(producer: producer, routing: routing, statistics: statistics, logger: logger),
            settler: JobSettler(state: state, statistics: statistics), statistics: statistics,
            maximumBatchSize: configuration.maximumBatchSize, tracing: configuration.tracing)
        let shutdown = ShutdownSequence(
            plan: ShutdownPlan(timeout: configuration.shutdownTimeout), consumer: consumer, producer: producer, statistics: statistics, logger: logger)
        let loops = max(1, configuration.concurrentBatches)
        let end = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<loops {
                group.addTask {
                    await loop.run()
                    return true
                }
            }
            await reader.run()
            // Graceful shutdown (or the consumer ended): the whole shutdown gets `shutdownTimeout` from here.
            let end = shutdown.plan.deadline(from: .now)
            await state.finish()
            await shutdown.drain(&group, loops: loops, until: shutdown.plan.drainDeadline(before: end))
            return end
        }
        // The final commit, leaving the group and the flush run to their bounded end even when this
        // run is cancelled (a ServiceGroup cancels every service when one fails, a benchmark cancels
        // its workers): a task of its own does not inherit the cancellation, and without the commit
        // every job answered since the last auto-commit is answered again by the partition's next
        // owner. It is awaited, and the plan bounds it.
        await Task { await shutdown.leave(by: end) }.value
        logger.info("worker stopped", metadata: ["replied": "\(statistics.snapshot.replied)"])
    }

    /// The scheduler and offset bookkeeping, storing offsets with and switching fetching on `consumer`.
    private func makeState(consumer: KafkaConsumer, topics: RequestTopics) -> WorkerState {
        let logger = self.logger
        return WorkerState(
            maximumInFlight: configuration.maximumInFlight, policy: configuration.scheduling,
            concurrentBatches: configuration.concurrentBatches, statistics: statistics,
            maximumRequestBytes: configuration.maximumRequestBytes, topics: topics,
            maximumBatchSize: configuration.maximumBatchSize,
            storeOffset: { partition, offset in
                do {
                    try consumer.storeOffset(topic: partition.topic, partition: partition.partition, offset: offset)
                } catch {
                    // The partition was revoked meanwhile: its new owner answers the job again.
                    logger.debug("offset not stored", metadata: ["error": "\(error)"])
                }
            },
            logger: logger,
            switchFetching: { change in
                // What librdkafka did, per class: the state records only that, and retries the rest.
                ClassFetchControl.apply(change, to: consumer, topics: topics)
            })
    }

    /// Consumer lag per assigned partition, as the consumer's poll thread last sampled it.
    public var consumerLag: [TopicPartition: Int64] { consumer.withLock { $0?.lag ?? [:] } }

    /// The topics this worker reads requests from (``WorkerConfiguration/classTopics``).
    package var requestTopics: RequestTopics {
        RequestTopics(requestsTopic: configuration.requestsTopic, classTopics: configuration.classTopics)
    }

    /// Consumer lag summed per class topic (`continuity`, `new`, `prefetch`), and `requests` for the
    /// requests topic, whose jobs carry their class in the body: what an autoscaler watches.
    public var consumerLagByClass: [String: Int64] {
        let topics = requestTopics
        var lag: [String: Int64] = [:]
        for (partition, behind) in consumerLag {
            let name =
                topics.priority(ofTopic: partition.topic)?.rawValue
                ?? (partition.topic == topics.requests ? ClassFetchControl.FetchClass.mixed.description : nil)
            if let name { lag[name, default: 0] += behind }
        }
        return lag
    }

    /// Liveness: false once the watchdog saw the processing loop stall (a restart is the cure).
    public var isStalled: Bool { stall.isStalled }
}
