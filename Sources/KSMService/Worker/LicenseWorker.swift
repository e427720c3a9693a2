import Foundation
import Kafka
import Licensing
import Logging
import ServiceLifecycle
import Synchronization
import Tracing

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
    public let statistics: WorkerStatistics
    let logger: Logger
    /// ``WorkerConfiguration/replyTopicPolicy``, resolved once.
    let replyTopics: ReplyTopicPolicy
    private let stall = Mutex<Watchdog.Stall?>(nil)
    /// The running consumer, for the lag gauge; nil before `run` and after it.
    private let consumer = Mutex<KafkaConsumer?>(nil)

    /// - Parameter statistics: pass one to share it with what wraps the store (``MeteredLicenseStore``);
    ///   default: a new one with `configuration.tenantLabelLimit`.
    public init(configuration: WorkerConfiguration, processor: LicenseProcessor, logger: Logger, statistics: WorkerStatistics? = nil) {
        self.configuration = configuration
        self.statistics = statistics ?? WorkerStatistics(tenantLabelLimit: configuration.tenantLabelLimit)
        self.processor = processor
        self.logger = logger
        replyTopics = configuration.replyTopicPolicy
    }

    public func run() async throws {
        let consumer = try KafkaConsumer(configuration: consumerConfiguration(), logger: logger)
        let producer = try KafkaProducer(configuration: producerConfiguration(), logger: logger)
        let topics = requestTopics
        let statistics = self.statistics
        let logger = self.logger
        let state = WorkerState(
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

        let plan = ShutdownPlan(timeout: configuration.shutdownTimeout)
        var deadline: ContinuousClock.Instant?
        await withTaskGroup(of: Bool.self) { group in
            let batches = max(1, configuration.concurrentBatches)
            for _ in 0..<batches {
                group.addTask {
                    await self.batchLoop(state: state, producer: producer)
                    return true
                }
            }
            await readLoop(state: state, consumer: consumer)
            // Graceful shutdown (or the consumer ended): the whole shutdown gets `shutdownTimeout` from here.
            let end = plan.deadline(from: .now)
            deadline = end
            await state.finish()
            group.addTask {
                try? await Task.sleep(until: plan.drainDeadline(before: end), clock: .continuous)
                return false
            }
            var running = batches
            while running > 0, let finished = await group.next() {
                if finished {
                    running -= 1
                    continue
                }
                // Out of time: batches stop retrying publishes; their jobs are not stored as done and are
                // redelivered to the next owner (at-least-once).
                logger.warning(
                    "shutdown: in-flight work not finished in time; left for redelivery",
                    metadata: ["timeout": "\(configuration.shutdownTimeout)", "inFlight": "\(statistics.snapshot.inFlight)"])
                group.cancelAll()
            }
            group.cancelAll()
        }
        let end = deadline ?? plan.deadline(from: .now)
        // The commit may retry until a second before the end; leaving and flushing share that second.
        await finalCommit(consumer: consumer, before: end - .seconds(1))
        // Leaving the group can wait behind a rebalance the coordinator holds open (a JoinGroup held
        // until departed members' sessions time out): bounded, so the process exits inside the grace
        // period. The offsets were committed above; not waiting only means the group notices later.
        let left = await ShutdownPlan.within(plan.remaining(until: end - .milliseconds(300), atLeast: .milliseconds(200))) { await consumer.close() }
        if left == nil {
            logger.warning("shutdown: leaving the consumer group did not finish in time; exiting anyway (offsets were committed)")
        }
        let flush = plan.remaining(until: end, atLeast: .milliseconds(200))
        _ = await ShutdownPlan.within(flush) { await producer.close(timeout: flush) }
        logger.info("worker stopped", metadata: ["replied": "\(statistics.snapshot.replied)"])
    }

    /// Commits stored offsets synchronously, before leaving the group (a commit after revocation is
    /// refused), retrying a failure until `end`: an answered job whose offset did not reach the
    /// broker is answered again by the next owner.
    ///
    /// Why retries: when other members leave at the same time, the coordinator is rebalancing and
    /// refuses commits (`REBALANCE_IN_PROGRESS`) until every member rejoined or its session timed out;
    /// each attempt is bounded (1.5 s), so one held by the rebalance does not use up the time, and the
    /// commit goes through once the rebalance completes (session.timeout.ms below the shutdown timeout).
    private func finalCommit(consumer: KafkaConsumer, before end: ContinuousClock.Instant) async {
        var attempt = 0
        while true {
            attempt += 1
            let left = end - .now
            let outcome: Result<Void, KafkaError>?
            outcome = await ShutdownPlan.within(max(min(left, .milliseconds(1500)), .milliseconds(200))) { () async -> Result<Void, KafkaError> in
                do throws(KafkaError) {
                    try await consumer.commit()
                    return .success(())
                } catch { return .failure(error) }
            }
            switch outcome {
            case .success?:
                logger.debug("final commit done", metadata: ["attempts": "\(attempt)"])
                return
            case .failure(let error)?:
                statistics.update { $0.kafkaError("consumer", .commitFailed) }
                if ContinuousClock.now + .milliseconds(200) < end {
                    logger.info("final commit failed; retrying", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .milliseconds(100))
                    continue
                }
                logger.error("final commit failed; answered jobs since the last commit will be redelivered", metadata: ["error": "\(error)"])
                return
            case nil:
                statistics.update { $0.kafkaError("consumer", .commitFailed) }
                if ContinuousClock.now + .milliseconds(200) < end {
                    logger.info("final commit attempt timed out; retrying")
                    continue
                }
                logger.error("final commit did not finish in time; answered jobs since the last commit may be redelivered")
                return
            }
        }
    }

    func consumerConfiguration() -> KafkaConsumer.Configuration {
        // A license request is latency-bound: don't let the broker hold a fetch for librdkafka's 500 ms default.
        var properties = ["fetch.wait.max.ms": "10", "fetch.error.backoff.ms": "50"].merging(configuration.kafkaProperties) { _, configured in configured }
        if let instance = configuration.instanceID { properties["group.instance.id"] = instance }
        var c = KafkaConsumer.Configuration(
            bootstrapServers: configuration.brokers, groupID: configuration.groupID, topics: requestTopics.all, properties: properties)
        // The worker bounds its own in-flight work (and pauses for it); a consumer buffer smaller than
        // that would pause and resume partitions on every burst, and librdkafka resumes slowly.
        c.eventBufferSize = max(c.eventBufferSize, configuration.maximumInFlight * 2)
        c.watchdogThreshold = configuration.watchdogThreshold
        // Stored offsets are committed within `commitInterval` (auto-commit; librdkafka sends nothing
        // when no stored offset moved), so a departure rebalance that refuses the final commit finds
        // little or nothing left to commit.
        if configuration.commitInterval > .zero { c.autoCommitInterval = configuration.commitInterval }
        let logger = self.logger
        let box = StallBox(worker: self)
        c.onStall = { stall in
            logger.error("processing loop stalled: no offset progress with messages outstanding", metadata: ["stall": "\(stall)"])
            box.worker?.stall.withLock { $0 = stall }
        }
        return c
    }

    /// Consumer lag per assigned partition, as the consumer's poll thread last sampled it.
    public var consumerLag: [TopicPartition: Int64] { consumer.withLock { $0?.lag ?? [:] } }

    /// The topics this worker reads requests from (``WorkerConfiguration/classTopics``).
    public var requestTopics: RequestTopics {
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
    public var isStalled: Bool { stall.withLock { $0 != nil } }

    func producerConfiguration() -> KafkaProducer.Configuration {
        var properties = ["linger.ms": "1"].merging(configuration.kafkaProperties) { _, configured in configured }
        properties["group.instance.id"] = nil
        var c = KafkaProducer.Configuration(bootstrapServers: configuration.brokers)
        c.properties = properties
        let statistics = self.statistics
        c.onError = { error in statistics.update { $0.kafkaError("producer", error.kind) } }
        return c
    }

    /// Reads consumer events until graceful shutdown, a batch of events per wake-up; pauses the
    /// consumer when too much is in flight.
    private func readLoop(state: WorkerState, consumer: KafkaConsumer) async {
        await withDiscardingTaskGroup { group in
            // This loop wakes only for consumer events, and a paused worker may get none: switches
            // librdkafka did not take are made again on a clock of their own.
            group.addTask { await state.keepFetchSwitchesMade() }
            for await events in consumer.eventBatches(limit: max(configuration.maximumBatchSize, 256)).cancelOnGracefulShutdown() {
                var messages: [KafkaMessage] = []
                for event in events {
                    if case .message(let message) = event {
                        messages.append(message)
                        continue
                    }
                    // Keep the order: messages before a rebalance event are queued before it is handled.
                    await enqueue(messages, state: state, consumer: consumer)
                    messages.removeAll()
                    await handle(event, state: state, consumer: consumer)
                }
                await enqueue(messages, state: state, consumer: consumer)
            }
            group.cancelAll()
        }
    }

    /// Queues received messages; the state pauses request topics whose room is used up.
    private func enqueue(_ messages: [KafkaMessage], state: WorkerState, consumer: KafkaConsumer) async {
        if messages.isEmpty { return }
        statistics.update { $0.received += messages.count }
        await state.enqueue(messages)
    }

    private func handle(_ event: KafkaConsumer.Event, state: WorkerState, consumer: KafkaConsumer) async {
        switch event {
        case .message: break
        case .assigned(let partitions):
            // The log ends at assignment tell first deliveries apart (their admission needs no
            // stored-reply lookup); asked off the read loop, and until they come nothing is assumed.
            let generations = await state.assigned(partitions)
            Task {
                let ends = await consumer.logEndOffsets(partitions)
                await state.recordLogEnds(ends, generations: generations)
            }
            let owned = (try? consumer.assignment().count) ?? partitions.count
            statistics.update {
                $0.assignedPartitions = owned
                $0.partitionChanges += 1
            }
            logger.info("partitions assigned", metadata: ["partitions": "\(partitions.map { "\($0.topic)/\($0.partition)" })"])
        case .revoked(let partitions):
            // Finished jobs stored their offsets as they finished; queued ones are the new owner's.
            await state.revoke(partitions)
            let owned = (try? consumer.assignment().count).map { max(0, $0 - partitions.count) } ?? 0
            statistics.update {
                $0.assignedPartitions = owned
                $0.partitionChanges += 1
            }
            // Done with them: the rebalance may unassign now (asking for the next events would say the
            // same a moment later). After the count above, which still includes them.
            consumer.acknowledgeRevocation()
            logger.info("partitions revoked", metadata: ["partitions": "\(partitions.map { "\($0.topic)/\($0.partition)" })"])
        case .error(let error):
            statistics.update { $0.kafkaError("consumer", error.kind) }
            let level: Logger.Level = error.kind == .offsetReset || error.kind == .commitFailed ? .error : .warning
            logger.log(
                level: level, "kafka consumer error", metadata: ["error": "\(error)", "kind": "\(error.kind.rawValue)", "retriable": "\(error.isRetriable)"])
        }
    }

    /// Takes batches until the queue is finished and drained: answer each, then hand it to a settling
    /// task (publish, store offsets) and take the next at once. Returns when every batch it took has
    /// settled.
    ///
    /// Why not publish in line: a batch settles only when every delivery report is in, and a reply
    /// partition whose leader died holds its reports until the failover (seconds). Nearly every batch
    /// has such a reply, so in line every loop stopped within one batch and the fleet went silent,
    /// not a third of it (docs/faults.md, broker failover). Detached, the replies for live partitions
    /// keep flowing; the jobs of unsettled batches stay in flight, so the in-flight limit
    /// (``WorkerConfiguration/maximumInFlight``) bounds what waits, and fetching pauses at it.
    private func batchLoop(state: WorkerState, producer: KafkaProducer) async {
        await withDiscardingTaskGroup { settling in
            while let batch = await state.nextBatch(limit: configuration.maximumBatchSize) {
                var perClass: [String: Int] = [:]
                for job in batch { perClass[job.priority.rawValue, default: 0] += 1 }
                let batchClass = batch.first?.priority.rawValue ?? LicenseJob.Priority.new.rawValue
                statistics.update { s in
                    s.batches += 1
                    for (priority, n) in perClass { s.processingByClass[priority, default: 0] += n }
                }
                let spans: [(any Span)?] = configuration.tracing ? batch.map { JobTracing.start($0) } : []
                let started = ContinuousClock.now
                let answered = await answerBatch(batch)
                let outcomes = answered.outcomes
                let processing = ContinuousClock.now - started
                await state.processed(jobs: batch.count, in: processing, storeFailed: answered.storeFailed)
                for (span, outcome) in zip(spans, outcomes) {
                    if let span { JobTracing.recordOutcome(outcome, on: span) }
                }
                let pending = zip(batch, outcomes).enumerated().map { index, pair in
                    Pending(
                        message: pair.0.message, outcome: pair.1, priority: pair.0.priority.rawValue, arrived: pair.0.arrived,
                        span: index < spans.count ? spans[index] : nil)
                }
                settling.addTask {
                    await self.settle(pending, perClass: perClass, batchClass: batchClass, processing: processing, state: state, producer: producer)
                }
            }
        }
    }

    /// Publishes one answered batch, then marks its delivered jobs done; ``WorkerState`` stores the
    /// offsets that became contiguous (``OffsetTracker``).
    private func settle(
        _ pending: [Pending], perClass: [String: Int], batchClass: String, processing: Duration, state: WorkerState,
        producer: KafkaProducer
    ) async {
        let delivered = await publish(pending, producer: producer)
        statistics.update { s in
            s.batchLatency[batchClass, default: LatencyHistogram()].observe(processing)
            for (priority, n) in perClass { s.processingByClass[priority, default: 0] -= n }
        }
        for job in pending { job.span?.end() }
        // Stores the offsets that became contiguous, in order, inside the state actor.
        await state.finished(delivered, settled: pending.count)
        // Room freed and queues drained: resume (or pause) request topics as their thresholds say.
        await state.fetchChange()
    }

    /// What to publish for one message.
    enum Outcome: Sendable {
        case reply(LicenseReply)
        /// The original message, bounded by ``WorkerConfiguration/deadLetterLimits``.
        case deadLetter(reason: String)
        /// What is left when a reply or a full dead letter was refused for good (``DeadLetterRecord/headersOnly``).
        case deadLetterHeadersOnly(reason: String, jobID: String?)
    }

    /// A batch's answers, one per job in order, and whether the store failed it on the first attempt.
    struct AnsweredBatch: Sendable {
        var outcomes: [Outcome]
        /// Some job was answered `storeUnavailable` at first (retried or not): the batch's time went to
        /// the store's outage, not to work, so it is no measure of capacity (``ServiceRate``).
        var storeFailed = false
    }

    /// ``answerBatch(_:)``'s outcomes alone.
    func answer(_ batch: [ScheduledJob]) async -> [Outcome] {
        await answerBatch(batch).outcomes
    }

    /// Answers a batch: shed jobs at once (`overloaded` with their retry-after hint), the rest through
    /// the processor. A store outage is retried twice before it is answered (fail closed).
    func answerBatch(_ batch: [ScheduledJob]) async -> AnsweredBatch {
        var replies = [LicenseReply?](repeating: nil, count: batch.count)
        var work: [Int] = []
        var refused: [Int: String] = [:]
        for (index, job) in batch.enumerated() {
            if job.isOversize, case .failure(let error) = job.decoded {
                // Refused before any work: never decoded, never asked of the store.
                refused[index] = error.reason
            } else if case .success(let decoded) = job.decoded, let refusal = replyTopicRefusal(decoded, message: job.message) {
                // Refused before any work: no RSA, no lease slot, no store read for a job whose answer
                // would go where the platform does not allow (``ReplyTopicPolicy``).
                replies[index] = refusal
            } else if let retryAfter = job.retryAfterMilliseconds, case .success(let decoded) = job.decoded {
                replies[index] = LicenseReply(
                    id: decoded.id.value, status: .overloaded,
                    reason: "worker overloaded: this \(decoded.priority) job would wait longer than allowed; retry after \(retryAfter) ms",
                    tenant: decoded.tenant.value, account: decoded.account.value, rule: "schedule:shed-\(decoded.priority)",
                    retryAfterMilliseconds: retryAfter)
            } else {
                work.append(index)
            }
        }
        // One ledger for the batch's attempts: a retry after a store outage does not count a job
        // against its account's rate limit twice.
        let ledger = RateCountLedger()
        let firstDeliveries = work.map { batch[$0].firstDelivery }
        let processed = await processor.process(decoded: work.map { batch[$0].decoded }, ledger: ledger, firstDeliveries: firstDeliveries)
        for (index, reply) in zip(work, processed) { replies[index] = reply }
        var storeFailed = false
        for attempt in 1...2 {
            let retry = replies.indices.filter { replies[$0]?.status == .storeUnavailable }
            if retry.isEmpty { break }
            storeFailed = true
            statistics.update { $0.storeRetries += 1 }
            try? await Task.sleep(for: .milliseconds(100 * attempt * attempt))
            let again = await processor.process(
                decoded: retry.map { batch[$0].decoded }, ledger: ledger,
                firstDeliveries: retry.map { batch[$0].firstDelivery })
            for (index, reply) in zip(retry, again) { replies[index] = reply }
        }
        let outcomes: [Outcome] = replies.enumerated().map { index, entry in
            if let reason = refused[index] { return .deadLetter(reason: reason) }
            // Every other entry was filled above: shed jobs, then the processor's one reply per job.
            guard var reply = entry else { return .deadLetter(reason: "internal: job left unanswered") }
            if reply.status == .storeUnavailable, reply.retryAfterMilliseconds == nil {
                // Jittered, so clients of a whole batch do not come back at the same moment.
                reply.retryAfterMilliseconds = Int64.random(in: 1_000...2_000)
            }
            // A payload without even a readable ID cannot be answered: it goes to the dead-letter topic.
            return reply.status == .invalidJob && reply.id.isEmpty ? .deadLetter(reason: reply.reason) : .reply(reply)
        }
        return AnsweredBatch(outcomes: outcomes, storeFailed: storeFailed)
    }

    /// One job's answer on its way out, with what the metrics and the trace need.
    struct Pending: Sendable {
        var message: KafkaMessage
        var outcome: Outcome
        var priority: String
        var arrived: ContinuousClock.Instant
        var span: (any Span)?
    }

    /// The record to publish for one message: the reply on the reply topic (the job's `reply-topic`
    /// header wins), or the original bytes on the dead-letter topic. A reply carries the job's trace
    /// context (``JobTracing``).
    func record(_ outcome: Outcome, for message: KafkaMessage, span: (any Span)? = nil) -> KafkaProducer.Record {
        switch outcome {
        case .reply(let reply):
            // A topic outside the allowlist is never written: the answer goes to the replies topic (a
            // job naming one was refused in ``answer(_:)``; this holds for every other answer too).
            let tenant = reply.tenant.flatMap { try? StoreIdentifier($0) }
            let named = Self.replyTopicHeader(of: message)
            let topic = named.flatMap { isAllowedReplyTopic($0, tenant: tenant) ? $0 : nil } ?? configuration.repliesTopic
            var headers: [(String, [UInt8])] =
                [
                    ("correlation-id", message.header("correlation-id") ?? Array(reply.id.utf8)),
                    ("ksm-status", Array(String(reply.status.rawValue).utf8)),
                ] + JobTracing.replyHeaders(for: message, span: span)
            // The same bytes as the first answer (a redelivered job): marked, so the edge may drop it.
            if reply.isDuplicate { headers.append(("ksm-duplicate", Array("1".utf8))) }
            return KafkaProducer.Record(topic: topic, key: message.key, value: reply.jsonBytes(), headers: headers)
        case .deadLetter(let reason):
            return DeadLetterRecord.make(for: message, reason: reason, topic: configuration.deadLetterTopic, limits: configuration.deadLetterLimits)
        case .deadLetterHeadersOnly(let reason, let jobID):
            return DeadLetterRecord.headersOnly(for: message, reason: reason, jobID: jobID, topic: configuration.deadLetterTopic)
        }
    }

    /// The `reply-topic` header as text; a header that is not UTF-8 names no topic Kafka could hold,
    /// so it is kept as a name no pattern matches rather than decoded lossily into one that might.
    static func replyTopicHeader(of message: KafkaMessage) -> String? {
        guard let bytes = message.header("reply-topic") else { return nil }
        return String(validating: bytes, as: UTF8.self) ?? "\u{0}"
    }

    /// The replies topic, or a topic ``replyTopics`` allows for `tenant`.
    func isAllowedReplyTopic(_ topic: String, tenant: StoreIdentifier?) -> Bool {
        topic.utf8.elementsEqual(configuration.repliesTopic.utf8) || replyTopics.allows(topic, tenant: tenant)
    }

    /// The refusal for a job whose `reply-topic` header names a topic its tenant may not use; nil
    /// when the destination is allowed. Counted in ``WorkerStatistics/replyTopicRefusals``.
    func replyTopicRefusal(_ job: LicenseJob, message: KafkaMessage) -> LicenseReply? {
        guard let named = Self.replyTopicHeader(of: message), !isAllowedReplyTopic(named, tenant: job.tenant) else { return nil }
        statistics.update { $0.replyTopicRefusals += 1 }
        let shown = ReplyTopicPolicy.isValidTopicName(named) ? "topic \(named)" : "a name that is no Kafka topic"
        return LicenseReply(
            id: job.id.value, status: .replyTopicRefused,
            reason:
                "the job's reply-topic header names \(shown), which tenant \(job.tenant) may not receive answers on (reply-topics); not processed, answered on \(configuration.repliesTopic)",
            tenant: job.tenant.value, account: job.account.value, rule: "reply-topic:not-allowed")
    }

    /// Publishes a batch's replies (and dead letters) and waits for their delivery reports. Returns
    /// the messages whose answer is settled (delivered, or given up on after the headers-only dead
    /// letter was refused too); the rest, left when the task is cancelled (shutdown out of time),
    /// are not stored as done and are redelivered.
    ///
    /// Retriable failures (Kafka unavailable, queue full, timeouts) are retried with capped backoff
    /// for as long as it takes. A non-retriable one is never retried as it was (a 1 MB dead
    /// letter refused with `MSG_SIZE_TOO_LARGE` was retried every 2 s forever and jammed its
    /// partition): a reply or a full dead letter falls back to a headers-only dead letter naming the
    /// job; if even that is refused for good, the message is logged at error, counted in
    /// `ksm_messages_dropped_total`, and its offset moves on.
    func publish(_ pending: [Pending], producer: KafkaProducer) async -> [KafkaMessage] {
        var remaining = pending
        var delivered: [KafkaMessage] = []
        delivered.reserveCapacity(pending.count)
        var delay = Duration.milliseconds(50)
        while !remaining.isEmpty {
            let records = remaining.map { record($0.outcome, for: $0.message, span: $0.span) }
            let results = await producer.send(records)
            let deliveredAt = ContinuousClock.now
            var retry: [Pending] = []
            var lastError: KafkaError?
            var replied: [(status: String, tenant: String, priority: String)] = []
            var latency: [String: LatencyHistogram] = [:]
            var deadLettered = 0
            var dropped = 0
            var failedKinds: [KafkaError.Kind] = []
            for (job, result) in zip(remaining, results) {
                switch result {
                case .success(let report):
                    delivered.append(job.message)
                    job.span?.addEvent("published")
                    latency[job.priority, default: LatencyHistogram()].observe(deliveredAt - job.arrived)
                    logger.trace("published", metadata: ["topic": "\(report.topic)", "partition": "\(report.partition)", "offset": "\(report.offset)"])
                    switch job.outcome {
                    case .deadLetter, .deadLetterHeadersOnly: deadLettered += 1
                    case .reply(let reply): replied.append((reply.status.name, reply.tenant ?? "", job.priority))
                    }
                case .failure(let error) where error.code == .deliveryWaitCancelled:
                    // Shutdown out of time: neither delivered nor retried; the job is redelivered.
                    continue
                case .failure(let error):
                    failedKinds.append(error.kind)
                    if error.isRetriable {
                        retry.append(job)
                        lastError = error
                    } else if let fallback = Self.fallback(for: job.outcome, after: error) {
                        logger.warning(
                            "publish refused for good; sending a headers-only dead letter instead",
                            metadata: [
                                "error": "\(error)", "source": "\(job.message.topic)/\(job.message.partition)/\(job.message.offset)",
                            ])
                        var next = job
                        next.outcome = fallback
                        retry.append(next)
                    } else {
                        // Even the smallest record was refused: nothing more can be published for it.
                        logger.error(
                            "dead letter refused for good; message dropped",
                            metadata: [
                                "error": "\(error)", "source": "\(job.message.topic)/\(job.message.partition)/\(job.message.offset)",
                                "bytes": "\(job.message.value.count)",
                            ])
                        dropped += 1
                        delivered.append(job.message)
                    }
                }
            }
            // One lock for the whole batch's counters.
            let unknownTenant = KSMStatus.unknownTenant.name
            statistics.update { s in
                s.deadLettered += deadLettered
                s.dropped += dropped
                s.replied += replied.count
                for (status, tenant, priority) in replied {
                    s.repliesByStatus[status, default: 0] += 1
                    let tenantLabel = s.tenantLabels.label(for: tenant, isKnown: status != unknownTenant)
                    let key = WorkerStatistics.ReplyKey(status: status, tenant: tenantLabel, priority: priority)
                    s.replies[key, default: 0] += 1
                }
                for (priority, histogram) in latency { s.endToEndLatency[priority, default: LatencyHistogram()].merge(histogram) }
                s.publishRetries += retry.count
                for kind in failedKinds { s.kafkaError("producer", kind) }
            }
            remaining = retry
            if remaining.isEmpty || Task.isCancelled { break }
            // Only fallbacks left: send them now; a retriable failure waits with backoff first.
            guard let lastError else { continue }
            logger.warning("publish failed; retrying", metadata: ["error": "\(lastError)", "records": "\(retry.count)"])
            try? await Task.sleep(for: delay)
            if Task.isCancelled { break }
            delay = min(delay * 2, .seconds(2))
        }
        return delivered
    }

    /// What to publish instead after `outcome` was refused with a non-retriable `error`; nil once
    /// there is nothing smaller to try.
    static func fallback(for outcome: Outcome, after error: KafkaError) -> Outcome? {
        switch outcome {
        case .reply(let reply):
            return .deadLetterHeadersOnly(
                reason: "reply (status \(reply.status.rawValue)) not deliverable: \(error.code): \(error.message)",
                jobID: reply.id.isEmpty ? nil : reply.id)
        case .deadLetter(let reason):
            return .deadLetterHeadersOnly(reason: "\(reason); full dead letter refused: \(error.code)", jobID: nil)
        case .deadLetterHeadersOnly:
            return nil
        }
    }
}
