import Foundation
import Kafka
import Logging

/// The worker's shared mutable state: the job scheduler (the bounded queue), the offset tracker,
/// the recent service rate, and which request topics are paused for backpressure
/// (``ClassFetchControl``). An actor, so the reader and the batch loops never race.
actor WorkerState {
    private var scheduler: JobScheduler
    private var waiters: [CheckedContinuation<[ScheduledJob]?, Never>] = []
    private var waiterLimits: [Int] = []
    private var isFinished = false
    private var tracker = OffsetTracker()
    /// Jobs taken into batches and not answered yet: the work ahead of every queued job.
    private var taken = 0
    /// Jobs answered and handed to a settling task, not yet settled (published, offsets marked).
    /// Counted here, not only in the tracker, because a revocation drops its partitions from the
    /// tracker while their jobs' settling tasks still hold them.
    private var unsettled = 0
    private var rate: ServiceRate
    private var fetchControl: ClassFetchControl
    /// Which topic gives which class (``RequestTopics``).
    let topics: RequestTopics
    /// Makes the pauses and resumes decided and says what librdkafka did (``ClassFetchControl/apply(_:to:topics:)``),
    /// inside the actor, so they reach the consumer in the order they were decided (two batch loops
    /// applying theirs outside could swap a pause and a resume) and the record follows each at once.
    private let switchFetching: @Sendable (ClassFetchControl.Change) -> ClassFetchControl.Outcome
    /// Where failed and recovered switches are told; nil in tests that do not look.
    private let logger: Logger?
    /// Stores a partition's next offset with the consumer, inside the actor: settling tasks finish in
    /// any order, and two of them storing outside could store a partition's offsets backwards.
    private let storeOffset: @Sendable (TopicPartition, Int64) -> Void
    let maximumInFlight: Int
    /// Where the queued-per-class gauge goes; nil in tests that do not look.
    private let statistics: WorkerStatistics?
    /// Per owned partition, its log end when this worker was assigned it: a message at or past it
    /// is on its first delivery (no earlier owner saw it). Unknown until the broker answered.
    private var logEndAtAssignment: [TopicPartition: Int64] = [:]
    /// Bumped on every assignment and revocation, so a log end asked for an earlier assignment of a
    /// partition is never recorded for a later one.
    private var assignmentGeneration: [TopicPartition: UInt64] = [:]

    init(
        maximumInFlight: Int, policy: SchedulingPolicy = SchedulingPolicy(), concurrentBatches: Int = 1, statistics: WorkerStatistics? = nil,
        maximumRequestBytes: Int = LicenseJob.maximumEncodedSize, topics: RequestTopics = RequestTopics(requestsTopic: "", classTopics: false),
        maximumBatchSize: Int = 128, storeOffset: @escaping @Sendable (TopicPartition, Int64) -> Void = { _, _ in },
        logger: Logger? = nil,
        switchFetching: @escaping @Sendable (ClassFetchControl.Change) -> ClassFetchControl.Outcome = { .succeeded($0) }
    ) {
        self.maximumInFlight = maximumInFlight
        self.storeOffset = storeOffset
        self.switchFetching = switchFetching
        self.logger = logger
        self.topics = topics
        self.fetchControl = ClassFetchControl(maximumInFlight: maximumInFlight, round: maximumBatchSize * max(concurrentBatches, 1))
        self.statistics = statistics
        self.scheduler = JobScheduler(policy: policy, maximumRequestBytes: maximumRequestBytes)
        self.rate = ServiceRate(initial: policy.initialRate, concurrency: concurrentBatches)
    }

    /// Adds received messages, in order (each decoded once, here). Pauses or resumes request topics as
    /// their room says, and returns that change.
    @discardableResult
    func enqueue(_ messages: [KafkaMessage]) -> ClassFetchControl.Change {
        let perSecond = rate.perSecond()
        for message in messages {
            let partition = message.topicPartition
            tracker.received(partition, offset: message.offset)
            // Work taken by batches but not answered yet waits ahead of every queued job; answered
            // jobs waiting for their delivery reports do not (they need no more processing).
            let ahead = taken
            let first = logEndAtAssignment[partition].map { message.offset >= $0 } ?? false
            scheduler.push(message, inFlight: ahead, rate: perSecond, firstDelivery: first, topicClass: topics.priority(ofTopic: partition.topic))
        }
        while !waiters.isEmpty, scheduler.count > 0 {
            let waiter = waiters.removeFirst()
            let limit = waiterLimits.removeFirst()
            waiter.resume(returning: take(limit))
        }
        publishQueued()
        return fetchChange()
    }

    /// Re-decides which request topics fetch, from what is in flight and queued now, and makes every
    /// switch librdkafka does not have yet: the ones just decided and any that failed before. Returns
    /// the switches it tried.
    @discardableResult
    func fetchChange() -> ClassFetchControl.Change {
        let change = fetchControl.update(inFlight: inFlight, queued: scheduler.countByClass, classes: topics.fetchClasses)
        if !change.isEmpty { makeSwitches(change) }
        return change
    }

    /// Makes `change` on the consumer and records what librdkafka did: only that moves the record, and
    /// a class it did not switch is switched again by the next ``fetchChange()``. Counts and tells
    /// the failures.
    private func makeSwitches(_ change: ClassFetchControl.Change) {
        let outcome = switchFetching(change)
        let report = fetchControl.record(outcome)
        let paused = Set(fetchControl.paused.map(\.description))
        let pending = Set(fetchControl.pending.map(\.description))
        statistics?.update { s in
            if outcome.switched.values.contains(.pause) { s.pauses += 1 }
            for (fetchClass, failure) in outcome.failed {
                s.fetchSwitchFailures[WorkerStatistics.FetchSwitchKey(fetchClass: fetchClass.description, action: failure.action.rawValue), default: 0] += 1
            }
            s.pausedFetchClasses = paused
            s.pendingFetchSwitches = pending
        }
        if let logger { ClassFetchControl.log(outcome, report, logger: logger) }
    }

    /// Classes whose decided switch librdkafka has not taken yet.
    var pendingFetchSwitches: Set<ClassFetchControl.FetchClass> { fetchControl.pending }
    /// Classes librdkafka has paused on every assigned partition.
    var pausedFetchClasses: Set<ClassFetchControl.FetchClass> { fetchControl.paused }

    /// The next batch (at most `limit` jobs, plus shed and expired ones, which cost nothing), in the
    /// scheduler's order, waiting for one if none is queued. Nil once finishing and drained.
    func nextBatch(limit: Int) async -> [ScheduledJob]? {
        if scheduler.count > 0 { return take(limit) }
        if isFinished { return nil }
        return await withCheckedContinuation { continuation in
            waiters.append(continuation)
            waiterLimits.append(limit)
        }
    }

    private func take(_ limit: Int) -> [ScheduledJob] {
        let batch = scheduler.nextBatch(limit: limit, now: LicenseProcessor.currentTimeMilliseconds())
        taken += batch.count
        publishQueued()
        return batch
    }

    /// Copies the queued counts per class to the statistics: once per arrival batch and per taken
    /// batch, one lock each.
    private func publishQueued() {
        guard let statistics else { return }
        let counts = scheduler.countByClass
        statistics.update { s in
            for (priority, count) in counts { s.queuedByClass[priority.rawValue] = count }
        }
    }

    /// No more messages will come: batch loops drain the queue and end.
    func finish() {
        isFinished = true
        for waiter in waiters { waiter.resume(returning: nil) }
        waiters.removeAll()
        waiterLimits.removeAll()
    }

    /// Drops queued messages of revoked partitions and forgets their offsets; the new owner redoes them.
    func revoke(_ partitions: [TopicPartition]) {
        scheduler.revoke(Set(partitions))
        tracker.revoke(partitions)
        for partition in partitions {
            logEndAtAssignment[partition] = nil
            assignmentGeneration[partition, default: 0] &+= 1
        }
        publishQueued()
    }

    /// Partitions were assigned: their log ends are not known yet (every message counts as possibly
    /// redelivered until ``recordLogEnds(_:generations:)``). Returns the tokens to record them with.
    func assigned(_ partitions: [TopicPartition]) -> [TopicPartition: UInt64] {
        // librdkafka fetches new partitions of a paused class until they are paused too.
        fetchControl.partitionsAssigned(of: Set(partitions.map(topics.fetchClass(of:))))
        fetchChange()
        var generations: [TopicPartition: UInt64] = [:]
        for partition in partitions {
            logEndAtAssignment[partition] = nil
            assignmentGeneration[partition, default: 0] &+= 1
            generations[partition] = assignmentGeneration[partition]
        }
        return generations
    }

    /// Records the log ends the broker gave for an assignment; ignored for a partition revoked or
    /// assigned again since (its token no longer matches). A log end read after the assignment is at
    /// least the one at the assignment, so a message past it is past both.
    func recordLogEnds(_ ends: [TopicPartition: Int64], generations: [TopicPartition: UInt64]) {
        for (partition, end) in ends where generations[partition] != nil && generations[partition] == assignmentGeneration[partition] {
            logEndAtAssignment[partition] = end
        }
    }

    /// Records how long a batch of `jobs` took to process (for the capacity estimate, unless it met a
    /// failing store: time spent waiting for the store is no measure of capacity, ``ServiceRate``);
    /// its jobs now wait for their settling task.
    func processed(jobs: Int, in duration: Duration, storeFailed: Bool = false) {
        if storeFailed {
            rate.recordStoreFailure()
        } else {
            rate.record(jobs: jobs, processing: duration)
        }
        taken = max(0, taken - jobs)
        unsettled += jobs
    }

    /// Marks messages finished (their replies delivered) at the end of a settling task that held
    /// `settled` jobs (delivered or given up on), and stores, per partition that moved, its offset
    /// (which only moves forward: ``OffsetTracker``); returns what it stored.
    @discardableResult
    func finished(_ messages: [KafkaMessage], settled: Int) -> [TopicPartition: Int64] {
        unsettled = max(0, unsettled - settled)
        var store: [TopicPartition: Int64] = [:]
        for message in messages {
            if let offset = tracker.finished(message.topicPartition, offset: message.offset) {
                store[message.topicPartition] = max(offset, store[message.topicPartition] ?? offset)
            }
        }
        for (partition, offset) in store { storeOffset(partition, offset) }
        return store
    }

    /// Jobs received and not settled: what the in-flight limit bounds. The tracker's count, or more
    /// while settling tasks still hold jobs of partitions revoked since.
    var inFlight: Int { max(tracker.inFlightCount, scheduler.count + taken + unsettled) }
    /// Queued jobs per priority class, for metrics.
    var queuedByClass: [LicenseJob.Priority: Int] { scheduler.countByClass }
}
