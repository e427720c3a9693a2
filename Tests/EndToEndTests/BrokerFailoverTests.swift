import Foundation
import KSMOperations
import KSMTestSupport
import Testing

/// Kafka broker failover (docs/faults.md): the fleet (redis-server, two `ksm serve` workers) on a
/// three-broker `ksm broker` whose topics are replicated on all three, leaders spread
/// (partition p on broker p mod 3 + 1). In the middle of a storm one broker is killed: set down,
/// and after a controller's delay its leadership (and in two cases the group coordinator) moves to
/// the survivors (`broker-kill`, docs/faults.md says what is emulated). Every job must get one
/// correct answer (duplicates byte-identical and marked), every account one slot, both workers keep
/// running and own partitions, and the time until replies flow again is printed as a `FAILOVER` line
/// (recorded in docs/faults.md). Arrival times are when the test's reply reader got each reply; a
/// reply counts as coming from the dead broker only if it was also written after the broker's log
/// ends were read just before the kill, so a reader the parallel suite holds up is no false alarm.
@Suite(.serialized, .timeLimit(.minutes(3))) struct BrokerFailoverTests {
    static let jobs = 2_000
    /// The broker killed, and the partitions of every 6-partition topic it leads.
    static let killed: Int32 = 2
    static let killedPartitions: Set<Int32> = [1, 4]
    /// What the killed broker held besides partition leadership, and how long its leadership
    /// stays on it after the kill (the controller's session timeout).
    enum Killed: String, CustomTestStringConvertible, Sendable {
        /// Only partition leadership: both groups' coordinators are on survivors.
        case partitionLeader = "partition leader"
        /// Partition leadership and the coordinator of both the workers' and the reply reader's group.
        case leaderAndCoordinator = "partition leader and group coordinator"
        /// The same, with KRaft's default broker session timeout (9 s) unscaled: longer than the
        /// fleet's consumer sessions (6 s), so the groups' sessions expire before the failover.
        case leaderAndCoordinatorPastSessionTimeout = "partition leader and group coordinator, failover after the consumer sessions expired"

        var testDescription: String { rawValue }

        var coordinatorKilled: Bool { self != .partitionLeader }

        /// A controller's session timeout scaled to the fleet's 6 s consumer sessions (KRaft's 9 s
        /// against the Deployment's 10 s in production), so the failover, like a real one, ends
        /// before the group's sessions expire; or, in the last case, KRaft's 9 s itself.
        var failoverDelay: Duration { self == .leaderAndCoordinatorPastSessionTimeout ? .seconds(9) : .seconds(4) }
    }

    @Test(
        "A broker killed mid-storm (leader of job and reply partitions, and in one case the group coordinator) loses no job: every job one correct answer, one slot per account",
        arguments: [Killed.partitionLeader, .leaderAndCoordinator])
    func brokerKilledMidStormLosesNoJob(_ killed: Killed) async throws {
        try await killMidStorm(killed)
    }

    @Test(
        "A failover slower than the consumer sessions: the group rebalances, none lost, and any job that comes back is answered with its stored reply (byte-identical, marked)"
    )
    func failoverPastTheSessionTimeoutRedeliversWithoutLoss() async throws {
        let outcome = try await killMidStorm(.leaderAndCoordinatorPastSessionTimeout)
        // The sessions did expire (what this case is for): the group rebalanced. Whether answered
        // jobs come back depends on whether any were answered while the broker was dead; those
        // that do are byte-identical and marked (checked in killMidStorm).
        #expect(outcome.rebalanced, "no assignment changed after the kill: the sessions did not expire? \(outcome.verdict)")
    }

    @Test(
        "While a broker is dead, jobs whose replies go to live partitions keep being answered, not held behind batches waiting on the dead partitions' delivery reports"
    )
    func liveRepliesFlowWhileABrokerIsDead() async throws {
        // Both groups' coordinators stay alive: only partition leadership is lost. Two batches of 16 per
        // worker: 64 jobs in the fleet's batches at once. A worker that waited for every delivery
        // report of a batch would be stuck after those: a job fetched from the dead broker's
        // partitions before the kill has its reply keyed to the same, dead, partition, and nearly
        // every batch of the backlog holds one.
        let (fleet, load) = try await Self.fleetAndLoad(
            coordinatorsOnKilled: false, prefix: "lf",
            workerArguments: ["--concurrent-batches", "2", "--max-batch-size", "16"])
        let jobs = 600
        let storm = Task { await load.storm(count: jobs) }
        // Killed once the workers hold a backlog (every job fetched, a tenth answered, as the reader
        // sees it). What was answered while the broker was dead is counted by the workers' `/status`
        // (replies delivered), which a reader held up by the parallel suite cannot undercount.
        try await load.waitFor("a tenth answered", timeout: .seconds(60)) { load.answered >= jobs / 10 }
        let endsBeforeKill = await load.replyLogEnds(Self.killedPartitions)
        let repliedAtKill = await Self.total(fleet, \.replied)
        let kill = ContinuousClock.now
        let answeredAtKill = load.answered
        let failing = Task { try await fleet.brokerControl("broker-kill \(Self.killed) 5000") }
        try await Task.sleep(until: kill + .milliseconds(4_500))
        let repliedWhileDead = await Self.total(fleet, \.replied) - repliedAtKill
        let quiet = load.arrivals(onPartitions: Self.killedPartitions, in: (kill + .seconds(1))..<(kill + .milliseconds(4_500)), writtenFrom: endsBeforeKill)
        try await failing.value
        await storm.value
        try await load.waitUntilAllAnswered(timeout: .seconds(60))
        let verdict = load.verdict()
        print(
            "LIVE-REPLIES: the workers had delivered \(repliedAtKill) of \(jobs) replies at the kill of broker \(Self.killed) (the reader had \(answeredAtKill)), "
                + "\(repliedWhileDead) more in the 4.5 s after it, while it was dead (about two thirds of the rest are on live partitions); \(verdict)")
        #expect(quiet == 0, "\(quiet) replies arrived on the killed broker's partitions while it was dead (log ends before the kill: \(endsBeforeKill))")
        // Batches stuck on the dead partitions would hold at most 64 jobs, about 43 of them answerable.
        #expect(
            repliedWhileDead >= (jobs - repliedAtKill) / 3, "only \(repliedWhileDead) of the \(jobs - repliedAtKill) left answered while the broker was dead")
        verdict.expectEveryJobAnsweredOnce(jobs: jobs)
        try await FaultTests.expectOneSlotPerAccount(fleet: fleet, load: load)
        await load.close()
    }

    /// What one kill left: every job's outcome, and whether the group's assignment changed after it.
    struct Outcome {
        var verdict: FaultLoad.Verdict
        var rebalanced: Bool
    }

    /// One `/status` count summed over the running workers (replies delivered, assignment changes).
    static func total(_ fleet: Fleet, _ count: KeyPath<WorkerStatus, Int>) async -> Int {
        var total = 0
        for worker in fleet.workers where worker.isRunning { total += await worker.status()?[keyPath: count] ?? 0 }
        return total
    }

    /// Three brokers; the workers' and the reply reader's group coordinators placed (and so tracked by
    /// the failover) before anyone joins, on the broker to be killed or on survivors; two workers
    /// owning their partitions; and the load, reading replies in its own group.
    static func fleetAndLoad(coordinatorsOnKilled: Bool, prefix: String, workerArguments: [String] = []) async throws -> (Fleet, FaultLoad) {
        let fleet = try await Fleet(brokers: 3)
        let clientGroup = "failover-client-\(UUID().uuidString)"
        try await fleet.brokerControl("coordinator fps-ksm \(coordinatorsOnKilled ? Self.killed : 1)")
        try await fleet.brokerControl("coordinator \(clientGroup) \(coordinatorsOnKilled ? Self.killed : 3)")
        try await fleet.startWorker(extraArguments: workerArguments)
        try await fleet.startWorker(extraArguments: workerArguments)
        try await fleet.waitUntilBalanced()
        let load = try await FaultLoad(fleet: fleet, prefix: "\(prefix)\(UInt32.random(in: 0..<UInt32.max))", groupID: clientGroup)
        return (fleet, load)
    }

    /// Starts the fleet on three brokers, storms it, kills broker 2 once a quarter is answered,
    /// checks every outcome but duplicates' count, prints the `FAILOVER` line, and returns the verdict.
    ///
    /// The storm comes in two halves, the second sent at the kill: a fast fleet (or a test process
    /// slow to notice the quarter) could otherwise answer the whole storm before the kill, leaving
    /// nothing to fail over. The second half's jobs and replies on the dead broker's partitions wait
    /// for the failover, so there is always work that only the failover can let through.
    @discardableResult
    func killMidStorm(_ killed: Killed) async throws -> Outcome {
        let began = ContinuousClock.now
        // Two workers × 8 batches × 64 jobs keep half the storm queued, on any host: at the default 128
        // (or with more cores, hence more batches) they take all 2,000 jobs at once, and the kill at a
        // quarter answered comes after the last reply was produced, with nothing left to fail over.
        let (fleet, load) = try await Self.fleetAndLoad(
            coordinatorsOnKilled: killed.coordinatorKilled, prefix: "bf",
            workerArguments: ["--max-batch-size", "64", "--concurrent-batches", "8"])
        let secondHalf = (Self.jobs / 2..<Self.jobs).compactMap { try? load.makeJob($0) }
        try #require(secondHalf.count == Self.jobs / 2)
        let storm = Task { await load.storm(count: Self.jobs / 2) }
        try await load.waitFor("a quarter of the storm answered", timeout: .seconds(60)) { load.answered >= Self.jobs / 4 }

        let changesAtKill = await Self.total(fleet, \.partitionChanges)
        let endsBeforeKill = await load.replyLogEnds(Self.killedPartitions)
        let kill = ContinuousClock.now
        let answeredAtKill = load.answered
        let failing = Task { try await fleet.brokerControl("broker-kill \(Self.killed) \(killed.failoverDelay.components.seconds * 1000)") }
        let rest = Task { await load.send(secondHalf) }
        // What the workers deliver while the broker is dead (their /status counts replies once delivered).
        try await Task.sleep(until: kill + .seconds(1))
        let (repliedEarly, receivedEarly) = (await Self.total(fleet, \.replied), await Self.total(fleet, \.received))
        try await Task.sleep(until: kill + killed.failoverDelay - .milliseconds(500))
        let (repliedLate, receivedLate) = (await Self.total(fleet, \.replied), await Self.total(fleet, \.received))
        try await failing.value
        let failover = ContinuousClock.now
        await storm.value
        await rest.value
        try await load.waitUntilAllAnswered(timeout: .seconds(60))

        let verdict = load.verdict()
        let recovery = load.recovery(after: kill)
        let resumed = load.firstArrival(onPartitions: Self.killedPartitions, atOrAfter: failover)
        let quiet = load.arrivals(onPartitions: Self.killedPartitions, in: (kill + .seconds(1))..<failover, writtenFrom: endsBeforeKill)
        let seconds = FaultLoad.Recovery.seconds
        print(
            "FAILOVER \(killed.rawValue): \(answeredAtKill) of \(Self.jobs) answered at the kill; failover \(seconds(failover - kill)) after the kill; replies on the killed broker's partitions again "
                + "\(resumed.map { seconds($0 - kill) } ?? "never") after the kill (\(resumed.map { seconds($0 - failover) } ?? "n/a") after the failover), "
                + "\(quiet) there while it was dead; the workers received \(receivedLate - receivedEarly) jobs and delivered \(repliedLate - repliedEarly) replies from 1 s after the kill to 0.5 s before the failover; longest silence on all partitions \(seconds(load.longestSilence(after: kill))); "
                + "\(recovery); \(verdict); test \(seconds(ContinuousClock.now - began))")

        // The kill took effect (nothing came from the dead broker's partitions) and the failover ended it.
        #expect(quiet == 0, "\(quiet) replies arrived on the killed broker's partitions while it was dead (log ends before the kill: \(endsBeforeKill))")
        #expect(resumed != nil, "no reply arrived on the killed broker's partitions after the failover")
        verdict.expectEveryJobAnsweredOnce(jobs: Self.jobs)
        #expect(fleet.workers.allSatisfy { $0.isRunning }, "a worker exited")
        // Both workers own partitions again (after the rebalance, when the sessions expired).
        try await fleet.waitUntilBalanced(timeout: .seconds(20))
        let rebalanced = await Self.total(fleet, \.partitionChanges) > changesAtKill
        try await FaultTests.expectOneSlotPerAccount(fleet: fleet, load: load)
        // The survivors serve a fresh job with the killed broker still down.
        try await FaultTests.expectFreshJobAnswered(load: load)
        await load.close()
        return Outcome(verdict: verdict, rebalanced: rebalanced)
    }
}
