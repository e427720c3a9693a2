import Foundation
import KSMLoad
import KSMService
import KSMTestSupport
import Licensing
import RedisStore
import Testing

/// A store outage of a few seconds under steady load, against the real binary: redis-server killed
/// and restarted on its port, or a Redis Cluster master killed while the workers wait for a replica
/// (`--redis-wait-replicas 1`) until the dead node is back as its new master's replica. The client
/// obeys every `retry-after-ms`, as an edge should, so a worker that sends new viewers away for a
/// minute shows as a minute's latency. Each run asserts that every job is answered correctly and
/// exactly once with one lease slot per account, that every job has its answer within 10 s of the
/// store being healthy again (or of its own sending, when later), and that no retry-after points
/// past the moment the backlog it was given behind had cleared (docs/scheduling.md, "A store outage").
@Suite(.serialized, .timeLimit(.minutes(4))) struct StoreOutageTests {
    /// Jobs and their steady pace: about 5 s of load before the outage, and load through and after it.
    static let jobs = 1_500
    static let perSecond = 100.0
    /// The bound on the backlog: every job sent before the store is healthy again is answered within it.
    static let recoveryBound = Duration.seconds(10)
    /// Slack on "no retry-after past the clearance" for the reader's own lag and the estimate's error.
    static let clearanceSlack = Duration.seconds(2)

    @Test(
        "A store outage under load: every job answered within 10 s of the store being healthy again, no retry-after past the backlog's clearance",
        arguments: Fleet.RedisBackend.allCases)
    func storeOutageUnderLoad(backend: Fleet.RedisBackend) async throws {
        let began = ContinuousClock.now
        let fleet = try await Fleet(durableRedis: backend == .single, backend: backend)
        // With a cluster, a lease batch is answered only once a replica of its master holds it: after
        // the failover the promoted master has none until the killed node rejoins (seconds of
        // "0 of 1 replicas acknowledged").
        let wait = backend == .cluster ? ["--redis-wait-replicas", "1"] : []
        try await fleet.startWorker(extraArguments: wait)
        try await fleet.startWorker(extraArguments: wait)
        try await fleet.waitUntilBalanced()
        let load = try await FaultLoad(fleet: fleet, prefix: "o\(UInt32.random(in: 0..<UInt32.max))", honoursRetryAfter: true)
        load.startLoad(count: Self.jobs, perSecond: Self.perSecond)
        try await load.waitFor("the fleet to answer", timeout: .seconds(60)) { load.answered >= Self.jobs / 4 }

        let faultStart = ContinuousClock.now
        let healthy: ContinuousClock.Instant
        switch backend {
        case .single:
            fleet.redis.stop()
            // The outage's length: a few seconds of load arrive while redis-server is gone.
            try await Task.sleep(for: .seconds(3))
            try await fleet.redis.start()
            healthy = .now
        case .cluster:
            let cluster = try #require(fleet.cluster)
            var victim: Int?
            for index in cluster.nodes.indices where try await cluster.role(index) == "master" {
                victim = index
                break
            }
            let master = try #require(victim)
            cluster.nodes[master].stop()
            // As an operator would: once its replica took over, the dead node comes back (empty)
            // and rejoins as the new master's replica; only then can WAIT be satisfied again. It
            // comes back a few seconds later, so the shard refuses lease writes for a while
            // ("0 of 1 replicas acknowledged"), as in a failover whose node takes time to restart.
            try await cluster.waitUntilHealthy(runningNodes: cluster.nodes.indices.filter { $0 != master })
            try await Task.sleep(for: .seconds(4))
            try await cluster.nodes[master].start()
            try await cluster.waitUntilHealthy()
            healthy = .now
        }
        let outage = healthy - faultStart
        try await load.waitForLoad(timeout: .seconds(90))
        try await load.waitUntilAllAnswered(timeout: .seconds(120))

        let verdict = load.verdict()
        let recovery = load.recovery(after: healthy)
        let advice = load.retryAdvice()
        let shed = advice.filter { $0.status == .overloaded }
        let latencies = load.latencies()
        print(
            """
            OUTAGE \(backend): store unhealthy for \(FaultLoad.Recovery.seconds(outage)); recovery \(recovery); \
            slowest answer after recovery or its send \(load.slowestAnswer(after: healthy).map { FaultLoad.Recovery.seconds($0.after) } ?? "n/a"); \
            \(shed.count) shed (retry-after max \(shed.map(\.retryAfter).max().map(FaultLoad.Recovery.seconds) ?? "n/a")), \
            \(advice.count - shed.count) other retriable replies (retry-after max \
            \(advice.filter { $0.status != .overloaded }.map(\.retryAfter).max().map(FaultLoad.Recovery.seconds) ?? "n/a")); \
            latency p50 \(FaultLoad.Recovery.seconds(Self.percentile(latencies, 0.5))) p99 \(FaultLoad.Recovery.seconds(Self.percentile(latencies, 0.99))) \
            max \(FaultLoad.Recovery.seconds(latencies.last ?? .zero)); \(verdict); \
            scenario \(FaultLoad.Recovery.seconds(ContinuousClock.now - began))
            """)

        verdict.expectEveryJobAnsweredOnce(jobs: Self.jobs)
        #expect(verdict.retriableByStatus["storeUnavailable", default: 0] > 0, "the store was down, yet no job was answered storeUnavailable: \(verdict)")
        #expect(
            recovery.backlog <= Self.recoveryBound,
            "the last job sent before the store was healthy again was answered \(recovery.backlog) after it (bound \(Self.recoveryBound))")
        // Nor does a job sent later wait on the outage's account (a capacity estimate it collapsed).
        let slowest = try #require(load.slowestAnswer(after: healthy))
        #expect(slowest.after <= Self.recoveryBound, "job \(slowest.id) was answered \(slowest.after) after the store was healthy again or after it was sent")
        // No client is told to come back after the backlog it was behind had cleared.
        let late = advice.filter { $0.retryAfter > $0.clearance + Self.clearanceSlack }
        #expect(late.isEmpty, "retry-after past the backlog's clearance: \(late.prefix(5).map(\.description))")
        try await Self.expectOneSlotPerAccount(fleet: fleet, load: load)
        try await FaultTests.expectFreshJobAnswered(load: load)
        await load.close()
    }

    /// The `q` quantile of sorted durations (zero when empty).
    static func percentile(_ sorted: [Duration], _ q: Double) -> Duration {
        guard !sorted.isEmpty else { return .zero }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * q).rounded(.up)) - 1)]
    }

    /// One live slot per account, and no slot set beyond the load's: on one Redis through the fault
    /// suite's check, on a cluster on every master.
    static func expectOneSlotPerAccount(fleet: Fleet, load: FaultLoad) async throws {
        guard let cluster = fleet.cluster else {
            try await FaultTests.expectOneSlotPerAccount(fleet: fleet, load: load)
            return
        }
        let store = try fleet.store()
        let now = LicenseProcessor.currentTimeMilliseconds()
        var wrong: [String] = []
        for account in load.accounts {
            let slots = try await store.listSlots(
                tenant: try StoreIdentifier(fleet.catalog.tenant), account: try StoreIdentifier(account), nowMilliseconds: now)
            if slots.count != 1 { wrong.append("\(account): \(slots.count)") }
        }
        #expect(wrong.isEmpty, "accounts without exactly one slot: \(wrong.prefix(10))")
        var found: [String] = []
        for index in cluster.nodes.indices where try await cluster.role(index) == "master" {
            let keys = try await cluster.nodeClient(index).send(["KEYS", "fps:*:slots"])
            found += (keys.arrayValue ?? []).compactMap(\.string)
        }
        let expected = Set(load.accounts.map { "fps:{t:\(fleet.catalog.tenant):a:\($0)}:slots" })
        #expect(
            found.count == load.accounts.count && Set(found) == expected,
            "\(found.count) slot sets for \(load.accounts.count) accounts; not the load's: \(found.filter { !expected.contains($0) }.prefix(5))")
    }
}
