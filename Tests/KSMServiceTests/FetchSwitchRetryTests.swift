import Kafka
import Logging
import Synchronization
import Testing

@testable import KSMService

/// A pause or resume of a request topic that librdkafka did not take is made again until it does, and
/// the worker's record of what is paused is what librdkafka has (``ClassFetchControl``).
@Suite("Fetch switch retries", .timeLimit(.minutes(3)))
struct FetchSwitchRetryTests {
    typealias Change = ClassFetchControl.Change
    typealias Outcome = ClassFetchControl.Outcome
    static let topics = RequestTopics(requestsTopic: "jobs", classTopics: true)
    static let requests = TopicPartition(topic: "jobs", partition: 0)
    static let continuity = TopicPartition(topic: "jobs.continuity", partition: 0)
    static let new0 = TopicPartition(topic: "jobs.new", partition: 0)
    static let new1 = TopicPartition(topic: "jobs.new", partition: 1)
    static let prefetch = TopicPartition(topic: "jobs.prefetch", partition: 0)
    static let injected = KafkaError(code: .state, message: "injected")

    @Test("a resume librdkafka did not take is returned by every update until it does; the record stays paused meanwhile")
    func failedResumeIsRetried() {
        var control = ClassFetchControl(maximumInFlight: 100, round: 8)
        _ = control.decide(inFlight: 100, queued: [:], classes: [.mixed])
        #expect(control.paused == [.mixed])
        let failure = ClassFetchControl.Failure(action: .resume, error: Self.injected)
        for attempt in 1...3 {
            // The load does not change: only the failure brings the resume back.
            let change = control.update(inFlight: 10, queued: [:], classes: [.mixed])
            #expect(change == Change(resume: [.mixed]), "attempt \(attempt)")
            let report = control.record(Outcome(failed: [.mixed: failure]))
            #expect(report.failed[.mixed]?.attempts == attempt)
            #expect(control.paused == [.mixed], "the record follows librdkafka, not the decision")
            #expect(control.pending == [.mixed])
        }
        let change = control.update(inFlight: 10, queued: [:], classes: [.mixed])
        let report = control.record(.succeeded(change))
        #expect(report.recovered == [.mixed: 3])
        #expect(control.paused.isEmpty && control.pending.isEmpty && control.failedAttempts.isEmpty)
        #expect(control.update(inFlight: 10, queued: [:], classes: [.mixed]).isEmpty, "nothing left to make")
    }

    @Test("a pause librdkafka did not take leaves the class fetching; decided back before a retry, it needs no switch")
    func failedPauseDecidedBack() {
        var control = ClassFetchControl(maximumInFlight: 100, round: 8)
        #expect(control.update(inFlight: 100, queued: [:], classes: [.mixed]) == Change(pause: [.mixed]))
        control.record(Outcome(failed: [.mixed: ClassFetchControl.Failure(action: .pause, error: Self.injected)]))
        #expect(control.paused.isEmpty)
        #expect(control.failedAttempts == [.mixed: 1])
        // Room came back before the retry: librdkafka already has what is wanted.
        #expect(control.update(inFlight: 40, queued: [:], classes: [.mixed]).isEmpty)
        #expect(control.pending.isEmpty && control.failedAttempts.isEmpty)
    }

    @Test("partitions assigned while their class is paused are paused too; a resume still to make survives the rebalance")
    func assignmentDuringPause() {
        let all = Self.topics.fetchClasses
        var control = ClassFetchControl(maximumInFlight: 1_000, round: 16)
        _ = control.decide(inFlight: 600, queued: [.new: 400], classes: all)
        #expect(control.paused == [.priority(.new)])
        control.partitionsAssigned(of: [.priority(.new), .priority(.continuity)])
        #expect(control.paused.isEmpty, "librdkafka fetches the new partition until told otherwise")
        let again = control.update(inFlight: 600, queued: [.new: 400], classes: all)
        #expect(again == Change(pause: [.priority(.new)]))
        control.record(.succeeded(again))

        // The resume is refused, then partitions are assigned: the old ones may still be paused.
        #expect(control.update(inFlight: 100, queued: [:], classes: all) == Change(resume: [.priority(.new)]))
        control.record(Outcome(failed: [.priority(.new): ClassFetchControl.Failure(action: .resume, error: Self.injected)]))
        control.partitionsAssigned(of: [.priority(.new)])
        #expect(control.paused == [.priority(.new)])
        #expect(control.update(inFlight: 100, queued: [:], classes: all) == Change(resume: [.priority(.new)]))
    }

    @Test("a class is switched only when every partition was: a refused partition fails its class alone, a failed assignment every class")
    func applyReportsPerClass() {
        let consumer = FlakyConsumer(assigned: [Self.requests, Self.continuity, Self.new0, Self.new1])
        consumer.refuse(.pause, Self.new1, times: 1)
        var outcome = ClassFetchControl.apply(Change(pause: [.priority(.new), .priority(.continuity)]), to: consumer, topics: Self.topics)
        #expect(outcome.switched == [.priority(.continuity): .pause])
        #expect(outcome.failed[.priority(.new)]?.action == .pause)
        #expect(outcome.failed[.priority(.new)]?.error.code == KafkaError.Code(name: "_UNKNOWN_PARTITION"))
        #expect(consumer.paused == [Self.continuity, Self.new0])

        // The retry makes the whole class's switch again.
        outcome = ClassFetchControl.apply(Change(pause: [.priority(.new)]), to: consumer, topics: Self.topics)
        #expect(outcome.switched == [.priority(.new): .pause] && outcome.failed.isEmpty)
        #expect(consumer.paused == [Self.continuity, Self.new0, Self.new1])

        consumer.failAssignment(times: 1)
        outcome = ClassFetchControl.apply(Change(pause: [.mixed], resume: [.priority(.new)]), to: consumer, topics: Self.topics)
        #expect(outcome.switched.isEmpty)
        #expect(outcome.failed[.mixed]?.action == .pause && outcome.failed[.priority(.new)]?.action == .resume)

        consumer.fail(.resume, times: 1)
        outcome = ClassFetchControl.apply(Change(pause: [.mixed], resume: [.priority(.new)]), to: consumer, topics: Self.topics)
        #expect(outcome.switched == [.mixed: .pause], "the pause call went through; the resume call failed")
        #expect(outcome.failed[.priority(.new)]?.action == .resume)

        // A class with no partition assigned has nothing left fetching.
        outcome = ClassFetchControl.apply(Change(pause: [.priority(.prefetch)]), to: consumer, topics: Self.topics)
        #expect(outcome.switched == [.priority(.prefetch): .pause])
    }

    @Test("a failed resume is made again by the worker's tick, with no message arriving, until the classes fetch; each failure is counted")
    func tickRetriesWithoutMessages() async throws {
        let assigned = [Self.requests, Self.continuity, Self.new0, Self.prefetch]
        let consumer = FlakyConsumer(assigned: assigned)
        let statistics = WorkerStatistics()
        let topics = Self.topics
        let state = WorkerState(
            maximumInFlight: 4, statistics: statistics, topics: topics, maximumBatchSize: 4,
            switchFetching: { ClassFetchControl.apply($0, to: consumer, topics: topics) })
        _ = await state.assigned(assigned)
        await state.enqueue(messages(on: Self.continuity, 0..<4))
        let all = Set(topics.fetchClasses)
        #expect(await state.pausedFetchClasses == all, "the in-flight limit pauses every class")
        #expect(consumer.paused == Set(assigned))

        consumer.fail(.resume, times: 3)
        let batch = await state.nextBatch(limit: 4) ?? []
        await state.processed(jobs: batch.count, in: .milliseconds(1))
        await state.finished(batch.map(\.message), settled: batch.count)
        // What the settling task does once room is free: the resume fails.
        #expect(await state.fetchChange().resume == all)
        #expect(await state.pausedFetchClasses == all, "a failed resume leaves the record where librdkafka is")
        #expect(await state.pendingFetchSwitches == all)
        #expect(statistics.snapshot.pendingFetchSwitches == Set(all.map(\.description)))

        // Nothing arrives and nothing settles from here: only the tick can make the resume.
        let ticks = Task { await state.keepFetchSwitchesMade(every: .milliseconds(10)) }
        try await eventually("the resume taken") { consumer.paused.isEmpty }
        ticks.cancel()
        await ticks.value
        #expect(await state.pausedFetchClasses.isEmpty)
        #expect(await state.pendingFetchSwitches.isEmpty)
        let snapshot = statistics.snapshot
        let expected = Dictionary(uniqueKeysWithValues: all.map { (WorkerStatistics.FetchSwitchKey(fetchClass: $0.description, action: "resume"), 3) })
        #expect(snapshot.fetchSwitchFailures == expected, "each failed attempt once per class")
        #expect(snapshot.pausedFetchClasses.isEmpty && snapshot.pendingFetchSwitches.isEmpty)
    }

    @Test("a partition assigned while its class is paused is paused by the worker's state, and again after a refusal")
    func assignedPartitionIsPaused() async throws {
        let consumer = FlakyConsumer(assigned: [Self.requests, Self.continuity, Self.new0, Self.prefetch])
        let topics = Self.topics
        let state = WorkerState(
            maximumInFlight: 4, topics: topics, maximumBatchSize: 4,
            switchFetching: { ClassFetchControl.apply($0, to: consumer, topics: topics) })
        _ = await state.assigned(consumer.assigned)
        await state.enqueue(messages(on: Self.continuity, 0..<4))
        #expect(consumer.paused.contains(Self.new0))

        // A rebalance adds a partition of the paused new-session class; librdkafka refuses it once.
        consumer.assign(Self.new1)
        consumer.refuse(.pause, Self.new1, times: 1)
        _ = await state.assigned([Self.new1])
        #expect(!consumer.paused.contains(Self.new1))
        #expect(await state.pendingFetchSwitches == [.priority(.new)])
        await state.fetchChange()
        #expect(consumer.paused.contains(Self.new1))
        #expect(await state.pendingFetchSwitches.isEmpty)
    }

    func messages(on partition: TopicPartition, _ offsets: Range<Int64>) -> [KafkaMessage] {
        offsets.map { KafkaMessage(topic: partition.topic, partition: partition.partition, offset: $0, key: nil, value: Array("{}".utf8), headers: []) }
    }
}

extension FetchSwitchRetryTests {
    /// Polls `condition` every 10 ms until it holds; fails after `timeout`, which only bounds a failing test.
    func eventually(_ what: String, timeout: Duration = .seconds(60), _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("timed out waiting for \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// A consumer whose fetch switches fail on demand, in front of a real consumer or of a recorded
/// assignment: a call fails as a whole (`fail`, `failAssignment`), or refuses one partition
/// (`refuse`, as librdkafka does for a partition it holds no state for) a number of times, then
/// goes through.
final class FlakyConsumer: PartitionFetchSwitching {
    private struct State {
        var assigned: [TopicPartition]
        var paused: Set<TopicPartition> = []
        var failedAssignments = 0
        var failedCalls: [ClassFetchControl.Action: Int] = [:]
        var refusals: [ClassFetchControl.Action: [TopicPartition: Int]] = [:]
        var failures = 0
    }

    private let state: Mutex<State>
    private let inner: KafkaConsumer?

    init(assigned: [TopicPartition]) {
        state = Mutex(State(assigned: assigned))
        inner = nil
    }

    /// In front of a real consumer: its assignment, and its pauses and resumes once not failed.
    init(wrapping consumer: KafkaConsumer) {
        state = Mutex(State(assigned: []))
        inner = consumer
    }

    /// Partitions paused through this double (and taken by the consumer behind it).
    var paused: Set<TopicPartition> { state.withLock { $0.paused } }
    var assigned: [TopicPartition] { state.withLock { $0.assigned } }
    /// Calls failed and partitions refused so far.
    var failures: Int { state.withLock { $0.failures } }

    func assign(_ partition: TopicPartition) { state.withLock { $0.assigned.append(partition) } }
    func failAssignment(times: Int) { state.withLock { $0.failedAssignments += times } }
    func fail(_ action: ClassFetchControl.Action, times: Int) { state.withLock { $0.failedCalls[action, default: 0] += times } }
    func refuse(_ action: ClassFetchControl.Action, _ partition: TopicPartition, times: Int) {
        state.withLock { $0.refusals[action, default: [:]][partition, default: 0] += times }
    }

    func assignment() throws(KafkaError) -> [TopicPartition] {
        let fails = state.withLock { s in
            guard s.failedAssignments > 0 else { return false }
            s.failedAssignments -= 1
            s.failures += 1
            return true
        }
        if fails { throw KafkaError(code: .state, message: "injected: assignment failed") }
        if let inner { return try inner.assignment() }
        return assigned
    }

    func pause(_ partitions: [TopicPartition]) throws(KafkaError) -> [TopicPartition: KafkaError] {
        try switchFetching(partitions, .pause)
    }

    func resume(_ partitions: [TopicPartition]) throws(KafkaError) -> [TopicPartition: KafkaError] {
        try switchFetching(partitions, .resume)
    }

    private func switchFetching(_ partitions: [TopicPartition], _ action: ClassFetchControl.Action) throws(KafkaError) -> [TopicPartition: KafkaError] {
        guard !partitions.isEmpty else { return [:] }
        let (fails, refused) = state.withLock { s -> (Bool, Set<TopicPartition>) in
            if s.failedCalls[action, default: 0] > 0 {
                s.failedCalls[action, default: 0] -= 1
                s.failures += 1
                return (true, [])
            }
            var refused: Set<TopicPartition> = []
            for partition in partitions where s.refusals[action]?[partition, default: 0] ?? 0 > 0 {
                s.refusals[action]?[partition, default: 0] -= 1
                s.failures += 1
                refused.insert(partition)
            }
            return (false, refused)
        }
        if fails { throw KafkaError(code: .state, message: "injected: \(action) failed") }
        let unknownPartition = KafkaError.Code(name: "_UNKNOWN_PARTITION") ?? .state
        var errors: [TopicPartition: KafkaError] = [:]
        for partition in refused { errors[partition] = KafkaError(code: unknownPartition, message: "injected: \(action) \(partition) refused") }
        let asked = partitions.filter { !refused.contains($0) }
        if let inner {
            let innerErrors = try action == .pause ? inner.pause(asked) : inner.resume(asked)
            errors.merge(innerErrors) { injected, _ in injected }
        }
        let taken = asked.filter { errors[$0] == nil }
        state.withLock { s in
            if action == .pause { s.paused.formUnion(taken) } else { s.paused.subtract(taken) }
        }
        return errors
    }
}
