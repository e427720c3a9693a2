import Foundation
import Kafka
import Logging
import ServiceLifecycle
import Synchronization

typealias Watchdog = KafkaConsumer.Watchdog

/// Lets the consumer's stall callback reach the worker without keeping it alive.
final class StallBox: Sendable {
    weak let worker: LicenseWorker?
    init(worker: LicenseWorker) { self.worker = worker }
}

/// A KSM worker: consumes license jobs from Kafka, answers each through the ``LicenseProcessor`` and
/// publishes the reply, storing a job's offset only after its reply's delivery report (at-least-once).
///
/// consume -> decode -> batch -> processor (one Redis round trip per batch, RSA on the crypto pool)
/// -> produce reply -> delivery report -> store offset. Graceful shutdown (SIGTERM through
/// ServiceLifecycle) stops fetching, finishes what is in flight, commits and leaves the group.
public final class LicenseWorker: Service, Sendable {
    public let configuration: WorkerConfiguration
    public let processor: LicenseProcessor
    public let statistics = WorkerStatistics()
    let logger: Logger
    private let stall = Mutex<Watchdog.Stall?>(nil)

    public init(configuration: WorkerConfiguration, processor: LicenseProcessor, logger: Logger) {
        self.configuration = configuration
        self.processor = processor
        self.logger = logger
    }

    public func run() async throws {
        let consumer = try KafkaConsumer(configuration: consumerConfiguration(), logger: logger)
        let producer = try KafkaProducer(configuration: producerConfiguration(), logger: logger)
        let state = WorkerState(maximumInFlight: configuration.maximumInFlight)
        for (topic, error) in await producer.warmUp(topics: [configuration.repliesTopic, configuration.deadLetterTopic]) {
            logger.warning("no metadata for a reply topic yet", metadata: ["topic": "\(topic)", "error": "\(error)"])
        }
        logger.info("worker started", metadata: ["group": "\(configuration.groupID)", "topic": "\(configuration.requestsTopic)"])

        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<max(1, configuration.concurrentBatches) {
                group.addTask { await self.batchLoop(state: state, consumer: consumer, producer: producer) }
            }
            await readLoop(state: state, consumer: consumer)
            await state.finish()
            await group.waitForAll()
        }
        do {
            try await consumer.commit()
        } catch {
            // Usually a rebalance as the fleet shuts down together; close() commits the stored offsets
            // once more, and whatever still misses is redelivered (at-least-once).
            logger.info("commit before close did not go through; close commits again", metadata: ["error": "\(error)"])
        }
        await consumer.close()
        await producer.close()
        logger.info("worker stopped", metadata: ["replied": "\(statistics.snapshot.replied)"])
    }

    func consumerConfiguration() -> KafkaConsumer.Configuration {
        // A license request is latency-bound: don't let the broker hold a fetch for librdkafka's 500 ms default.
        var properties = ["fetch.wait.max.ms": "10", "fetch.error.backoff.ms": "50"].merging(configuration.kafkaProperties) { _, configured in configured }
        if let instance = configuration.instanceID { properties["group.instance.id"] = instance }
        var c = KafkaConsumer.Configuration(bootstrapServers: configuration.brokers, groupID: configuration.groupID, topics: [configuration.requestsTopic], properties: properties)
        // The worker bounds its own in-flight work (and pauses for it); a consumer buffer smaller than
        // that would pause and resume partitions on every burst, and librdkafka resumes slowly.
        c.eventBufferSize = max(c.eventBufferSize, configuration.maximumInFlight * 2)
        c.watchdogThreshold = configuration.watchdogThreshold
        let logger = self.logger
        let box = StallBox(worker: self)
        c.onStall = { stall in
            logger.error("processing loop stalled: no offset progress with messages outstanding", metadata: ["stall": "\(stall)"])
            box.worker?.stall.withLock { $0 = stall }
        }
        return c
    }

    /// Liveness: false once the watchdog saw the processing loop stall (a restart is the cure).
    public var isStalled: Bool { stall.withLock { $0 != nil } }

    func producerConfiguration() -> KafkaProducer.Configuration {
        var properties = ["linger.ms": "1"].merging(configuration.kafkaProperties) { _, configured in configured }
        properties["group.instance.id"] = nil
        var c = KafkaProducer.Configuration(bootstrapServers: configuration.brokers)
        c.properties = properties
        return c
    }

    /// Reads consumer events until graceful shutdown; pauses the consumer when too much is in flight.
    private func readLoop(state: WorkerState, consumer: KafkaConsumer) async {
        for await event in consumer.events.cancelOnGracefulShutdown() {
            switch event {
            case .message(let message):
                statistics.update { $0.received += 1 }
                if await state.enqueue(message) {
                    statistics.update { $0.pauses += 1 }
                    do {
                        try consumer.pause(try consumer.assignment())
                        logger.debug("consumer paused: in-flight limit reached", metadata: ["limit": "\(configuration.maximumInFlight)"])
                    } catch {
                        logger.warning("pause failed", metadata: ["error": "\(error)"])
                    }
                }
            case .assigned(let partitions):
                let owned = (try? consumer.assignment().count) ?? partitions.count
                statistics.update { $0.assignedPartitions = owned }
                logger.info("partitions assigned", metadata: ["partitions": "\(partitions.map { "\($0.topic)/\($0.partition)" })"])
            case .revoked(let partitions):
                // Finished jobs stored their offsets as they finished; queued ones are the new owner's.
                await state.revoke(partitions)
                let owned = (try? consumer.assignment().count).map { max(0, $0 - partitions.count) } ?? 0
                statistics.update { $0.assignedPartitions = owned }
                logger.info("partitions revoked", metadata: ["partitions": "\(partitions.map { "\($0.topic)/\($0.partition)" })"])
            case .error(let error):
                logger.warning("kafka consumer error", metadata: ["error": "\(error)", "retriable": "\(error.isRetriable)"])
            }
        }
    }

    /// Takes batches until the queue is finished and drained.
    private func batchLoop(state: WorkerState, consumer: KafkaConsumer, producer: KafkaProducer) async {
        while let batch = await state.nextBatch(limit: configuration.maximumBatchSize) {
            statistics.update { $0.batches += 1 }
            let outcomes = await answer(batch)
            await withTaskGroup(of: Void.self) { group in
                for (message, outcome) in zip(batch, outcomes) {
                    group.addTask {
                        guard await self.publish(outcome, for: message, producer: producer) else { return }
                        if let offset = await state.finished(message) {
                            do {
                                try consumer.storeOffset(topic: message.topic, partition: message.partition, offset: offset)
                            } catch {
                                // The partition was revoked meanwhile: its new owner answers the job again.
                                self.logger.debug("offset not stored", metadata: ["error": "\(error)"])
                            }
                        }
                    }
                }
            }
            if await state.shouldResume() {
                do { try consumer.resume(try consumer.assignment()) } catch { logger.warning("resume failed", metadata: ["error": "\(error)"]) }
            }
        }
    }

    /// What to publish for one message.
    enum Outcome: Sendable {
        case reply(LicenseReply)
        case deadLetter(reason: String)
    }

    /// Decodes and processes a batch. A store outage is retried twice before it is answered (fail closed).
    func answer(_ batch: [KafkaMessage]) async -> [Outcome] {
        let payloads = batch.map(\.value)
        var replies = await processor.process(encoded: payloads)
        for attempt in 1...2 where replies.contains(where: { $0.status == .storeUnavailable }) {
            statistics.update { $0.storeRetries += 1 }
            try? await Task.sleep(for: .milliseconds(100 * attempt * attempt))
            let retry = replies.indices.filter { replies[$0].status == .storeUnavailable }
            let again = await processor.process(encoded: retry.map { payloads[$0] })
            for (i, reply) in zip(retry, again) { replies[i] = reply }
        }
        // A payload without even a readable ID cannot be answered: it goes to the dead-letter topic.
        return replies.map { reply in
            reply.status == .invalidJob && reply.id.isEmpty ? .deadLetter(reason: reply.reason) : .reply(reply)
        }
    }

    /// Publishes a reply (or dead letter) and waits for its delivery report, retrying with capped
    /// backoff while Kafka is unavailable. Returns false if shutdown came first: the offset is then
    /// not stored and the job is redelivered.
    func publish(_ outcome: Outcome, for message: KafkaMessage, producer: KafkaProducer) async -> Bool {
        let topic: String
        let value: [UInt8]
        var headers: [(String, [UInt8])] = []
        let correlation = message.header("correlation-id")
        switch outcome {
        case .reply(let reply):
            topic = message.header("reply-topic").map { String(decoding: $0, as: UTF8.self) } ?? configuration.repliesTopic
            value = reply.jsonBytes()
            headers.append(("correlation-id", correlation ?? Array(reply.id.utf8)))
            headers.append(("ksm-status", Array(String(reply.status.rawValue).utf8)))
        case .deadLetter(let reason):
            topic = configuration.deadLetterTopic
            value = message.value
            headers = message.headers
            headers.append(("dlq-reason", Array(reason.utf8)))
            headers.append(("dlq-source", Array("\(message.topic)/\(message.partition)/\(message.offset)".utf8)))
        }
        var delay = Duration.milliseconds(50)
        while true {
            do {
                let started = ContinuousClock.now
                let report = try await producer.send(topic: topic, key: message.key, value: value, headers: headers)
                logger.trace("published", metadata: ["topic": "\(topic)", "partition": "\(report.partition)", "offset": "\(report.offset)",
                                                     "ms": "\((ContinuousClock.now - started).components.attoseconds / 1_000_000_000_000_000)"])
                statistics.update {
                    switch outcome {
                    case .deadLetter: $0.deadLettered += 1
                    case .reply(let reply):
                        $0.replied += 1
                        $0.repliesByStatus[reply.status.name, default: 0] += 1
                    }
                }
                return true
            } catch {
                statistics.update { $0.publishRetries += 1 }
                logger.warning("publish failed; retrying", metadata: ["error": "\(error)", "topic": "\(topic)"])
                if Task.isCancelled { return false }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
            }
        }
    }
}
