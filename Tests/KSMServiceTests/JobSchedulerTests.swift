import KSMTestSupport
import Kafka
import Licensing
import Testing

@testable import KSMService

@Suite("Job scheduler")
struct JobSchedulerTests {
    /// A message whose body is a job with these fields (the SPC is a placeholder: the scheduler never opens it).
    static func message(
        _ id: String, tenant: String = "t", priority: LicenseJob.Priority = .new, deadline: Int64? = nil,
        partition: Int32 = 0, offset: Int64 = 0
    ) -> KafkaMessage {
        // Identifiers here are valid by construction.
        let job = LicenseJob(
            id: try! StoreIdentifier(id), tenant: try! StoreIdentifier(tenant), account: try! StoreIdentifier("a"),
            spc: [1, 2, 3], deadline: deadline, priority: priority)
        return KafkaMessage(topic: "jobs", partition: partition, offset: offset, key: nil, value: job.jsonBytes(), headers: [])
    }

    static func ids(_ batch: [ScheduledJob]) -> [String] {
        batch.map { job in (try? job.decoded.get().id.value) ?? "?" }
    }

    let now: Int64 = 1_000_000

    @Test("continuity goes before new sessions, new sessions before prefetch")
    func classesInOrder() {
        var s = JobScheduler(policy: SchedulingPolicy())
        s.push(Self.message("p1", priority: .prefetch), inFlight: 0, rate: 1000, now: now)
        s.push(Self.message("n1", priority: .new), inFlight: 0, rate: 1000, now: now)
        s.push(Self.message("c1", priority: .continuity), inFlight: 0, rate: 1000, now: now)
        s.push(Self.message("n2", priority: .new), inFlight: 0, rate: 1000, now: now)
        #expect(Self.ids(s.nextBatch(limit: 3, now: now)) == ["c1", "n1", "n2"])
        #expect(Self.ids(s.nextBatch(limit: 3, now: now)) == ["p1"])
        #expect(s.count == 0)
    }

    @Test("inside a class and tenant, the earliest deadline goes first; no deadline goes last")
    func earliestDeadlineFirst() {
        var s = JobScheduler(policy: SchedulingPolicy())
        s.push(Self.message("none"), inFlight: 0, rate: 1000, now: now)
        s.push(Self.message("late", deadline: now + 9_000), inFlight: 0, rate: 1000, now: now)
        s.push(Self.message("soon", deadline: now + 1_000), inFlight: 0, rate: 1000, now: now)
        s.push(Self.message("mid", deadline: now + 5_000), inFlight: 0, rate: 1000, now: now)
        #expect(Self.ids(s.nextBatch(limit: 10, now: now)) == ["soon", "mid", "late", "none"])
    }

    @Test("jobs past their deadline are handed out at once, outside the batch limit, even from a low class")
    func expiredJobsJumpTheQueue() {
        var s = JobScheduler(policy: SchedulingPolicy())
        for i in 0..<5 { s.push(Self.message("c\(i)", priority: .continuity), inFlight: 0, rate: 1000, now: now) }
        s.push(Self.message("gone", priority: .prefetch, deadline: now - 1), inFlight: 0, rate: 1000, now: now)
        let batch = Self.ids(s.nextBatch(limit: 2, now: now))
        #expect(batch == ["gone", "c0", "c1"])
    }

    @Test(
        "tenants share a class by weight, whatever the order they arrived in",
        arguments: [
            (1.0, 1.0, 50), (3.0, 1.0, 75), (1.0, 4.0, 20),
        ])
    func weightedFairness(weightA: Double, weightB: Double, expectedA: Int) {
        var policy = SchedulingPolicy()
        policy.tenantWeights = ["a": weightA, "b": weightB]
        var s = JobScheduler(policy: policy)
        // Tenant a's storm arrives first and is five times larger.
        for i in 0..<500 { s.push(Self.message("a\(i)", tenant: "a"), inFlight: 0, rate: 1_000_000, now: now) }
        for i in 0..<100 { s.push(Self.message("b\(i)", tenant: "b"), inFlight: 0, rate: 1_000_000, now: now) }
        let batch = s.nextBatch(limit: 100, now: now)
        let fromA = batch.filter { $0.tenant == "a" }.count
        #expect(abs(fromA - expectedA) <= 1, "a got \(fromA) of 100")
    }

    @Test("an idle tenant that wakes up gets no banked credit")
    func noBankedCredit() {
        var s = JobScheduler(policy: SchedulingPolicy())
        for i in 0..<200 { s.push(Self.message("a\(i)", tenant: "a"), inFlight: 0, rate: 1_000_000, now: now) }
        _ = s.nextBatch(limit: 150, now: now)
        for i in 0..<200 { s.push(Self.message("b\(i)", tenant: "b"), inFlight: 0, rate: 1_000_000, now: now) }
        let batch = s.nextBatch(limit: 40, now: now)
        let fromB = batch.filter { $0.tenant == "b" }.count
        #expect((19...21).contains(fromB), "b got \(fromB) of 40")
    }

    @Test("under overload prefetch and new sessions are shed with a jittered retry-after; continuity never is")
    func shedsWithRetryAfter() {
        var policy = SchedulingPolicy()
        policy.prefetchMaximumWait = .seconds(1)
        policy.newSessionMaximumWait = .seconds(4)
        var s = JobScheduler(policy: policy)
        #expect(SchedulingPolicy().newSessionMaximumWait == .seconds(30))
        // 3,000 jobs already taken, 1,000 jobs/s: a new job would wait about 3 s. The prefetch job
        // (limit 1 s) is told to come back once 2 s of it are done, and before all 3 s are.
        let prefetch = s.push(Self.message("p", priority: .prefetch), inFlight: 3_000, rate: 1_000, now: now)
        let fresh = s.push(Self.message("n", priority: .new), inFlight: 3_000, rate: 1_000, now: now)
        let continuity = s.push(Self.message("c", priority: .continuity), inFlight: 30_000, rate: 1_000, now: now)
        let hint = try? #require(prefetch.retryAfterMilliseconds)
        #expect((2_000...3_000).contains(hint ?? 0))
        #expect(fresh.retryAfterMilliseconds == nil)
        #expect(continuity.retryAfterMilliseconds == nil)
        let overloadedNew = s.push(Self.message("n2", priority: .new), inFlight: 5_000, rate: 1_000, now: now)
        #expect(overloadedNew.retryAfterMilliseconds != nil)
        // Shed jobs come out first, beyond the limit, so their clients hear at once.
        #expect(Set(Self.ids(s.nextBatch(limit: 1, now: now))) == ["p", "n2", "c"])
        let hints = (0..<200).compactMap { _ in s.push(Self.message("p", priority: .prefetch), inFlight: 2_000, rate: 1_000, now: now).retryAfterMilliseconds }
        #expect(hints.count == 200 && Set(hints).count > 50, "retry-after hints are spread")
    }

    @Test("a new-session job that would be answered after its own deadline is shed at once")
    func shedsWhenDeadlineCannotBeMet() {
        var s = JobScheduler(policy: SchedulingPolicy())
        // 2,000 ahead at 1,000 jobs/s: about 2 s of waiting.
        let hopeless = s.push(Self.message("n1", deadline: now + 1_000), inFlight: 2_000, rate: 1_000, now: now)
        let fine = s.push(Self.message("n2", deadline: now + 5_000), inFlight: 2_000, rate: 1_000, now: now)
        let playing = s.push(Self.message("c", priority: .continuity, deadline: now + 1_000), inFlight: 2_000, rate: 1_000, now: now)
        #expect(hopeless.retryAfterMilliseconds != nil)
        #expect(fine.retryAfterMilliseconds == nil)
        #expect(playing.retryAfterMilliseconds == nil)
    }

    @Test("with scheduling off it is first in, first out and sheds nothing")
    func fifoWhenDisabled() {
        var policy = SchedulingPolicy()
        policy.enabled = false
        var s = JobScheduler(policy: policy)
        s.push(Self.message("p", priority: .prefetch), inFlight: 100_000, rate: 1, now: now)
        s.push(Self.message("n"), inFlight: 0, rate: 1000, now: now)
        s.push(Self.message("c", priority: .continuity), inFlight: 0, rate: 1000, now: now)
        #expect(Self.ids(s.nextBatch(limit: 2, now: now)) == ["p", "n"])
        #expect(Self.ids(s.nextBatch(limit: 2, now: now)) == ["c"])
    }

    @Test("revoking partitions drops their queued jobs and keeps the rest in order")
    func revokeDropsPartitions() {
        var s = JobScheduler(policy: SchedulingPolicy())
        for i in 0..<6 { s.push(Self.message("j\(i)", deadline: now + Int64(i), partition: Int32(i % 2), offset: Int64(i)), inFlight: 0, rate: 1000, now: now) }
        s.revoke([TopicPartition(topic: "jobs", partition: 1)])
        #expect(s.count == 3)
        #expect(Self.ids(s.nextBatch(limit: 10, now: now)) == ["j0", "j2", "j4"])
    }

    @Test(
        "a tenant's jobs leave earliest deadline first, equal deadlines in arrival order, across interleaved arrivals and batches (20 random histories against a sorted list)"
    )
    func tenantOrderAgainstModel() {
        for seed in UInt64(1)...20 {
            // Seeded, so a failing history can be replayed from the seed in the expectation's message.
            var random = SplitMix64(state: seed)
            var s = JobScheduler(policy: SchedulingPolicy())
            // (deadline or max for none, arrival) of each queued job, and its ID.
            var model: [(order: (Int64, Int), id: String)] = []
            var arrival = 0
            for _ in 0..<300 {
                if Int.random(in: 0..<3, using: &random) < 2 || model.isEmpty {
                    // Few distinct deadlines, so ties (and ties among jobs without one) are common.
                    let step = Int.random(in: 0..<6, using: &random)
                    let deadline: Int64? = step == 5 ? nil : now + 1_000 * Int64(step + 1)
                    s.push(Self.message("j\(arrival)", priority: .continuity, deadline: deadline), inFlight: 0, rate: nil, now: now)
                    model.append(((deadline ?? .max, arrival), "j\(arrival)"))
                    arrival += 1
                } else {
                    let limit = Int.random(in: 1...8, using: &random)
                    model.sort { $0.order < $1.order }
                    let expected = model.prefix(limit).map(\.id)
                    model.removeFirst(expected.count)
                    #expect(Self.ids(s.nextBatch(limit: limit, now: now)) == expected, "seed \(seed)")
                }
                #expect(s.count == model.count)
            }
            model.sort { $0.order < $1.order }
            #expect(Self.ids(s.nextBatch(limit: model.count, now: now)) == model.map(\.id), "seed \(seed)")
        }
    }

    @Test("revoking a partition of a large backlog keeps exactly the other jobs, still in deadline and arrival order")
    func revokeKeepsOrderOfTheRest() {
        var s = JobScheduler(policy: SchedulingPolicy())
        var kept: [(order: (Int64, Int), id: String)] = []
        for i in 0..<500 {
            let deadline = now + 1_000 * Int64((i * 7919) % 101)
            s.push(Self.message("j\(i)", priority: .continuity, deadline: deadline, partition: Int32(i % 3)), inFlight: 0, rate: nil, now: now)
            if i % 3 != 0 { kept.append(((deadline, i), "j\(i)")) }
        }
        s.revoke([TopicPartition(topic: "jobs", partition: 0)])
        #expect(s.count == kept.count)
        kept.sort { $0.order < $1.order }
        #expect(Self.ids(s.nextBatch(limit: 500, now: now)) == kept.map(\.id))
    }

    @Test("queuing and draining a 30,000-job storm stays near linear (no copy of a queue per job)")
    func stormIsLinear() {
        var s = JobScheduler(policy: SchedulingPolicy())
        let messages = (0..<30_000).map {
            Self.message("j\($0)", tenant: "t\($0 % 3)", priority: $0 % 10 == 0 ? .new : .continuity, deadline: now + Int64($0 % 977))
        }
        let start = ContinuousClock.now
        for m in messages { s.push(m, inFlight: 0, rate: 1_000_000, now: now) }
        var drained = 0
        while s.count > 0 { drained += s.nextBatch(limit: 64, now: now).count }
        let elapsed = ContinuousClock.now - start
        #expect(drained == 30_000)
        // Linear work takes well under a second even in a debug build; a copy per job takes minutes.
        // The bound leaves room for a loaded CI host that stalls the test for many seconds.
        #expect(elapsed < .seconds(60), "took \(elapsed)")
    }

    @Test("a payload that is not a job is scheduled (as a new session) and keeps its decoding error")
    func undecodableIsScheduled() {
        var s = JobScheduler(policy: SchedulingPolicy())
        s.push(KafkaMessage(topic: "jobs", partition: 0, offset: 0, key: nil, value: Array("not json".utf8), headers: []), inFlight: 0, rate: 1000, now: now)
        let batch = s.nextBatch(limit: 10, now: now)
        #expect(batch.count == 1)
        if case .failure(let error) = batch.first?.decoded { #expect(error.reason.contains("not valid JSON")) } else { Issue.record("decoded") }
    }
}

@Suite("Service rate")
struct ServiceRateTests {
    @Test("capacity comes from processing time, so a lightly loaded worker is not mistaken for a slow one")
    func capacityNotArrivalRate() {
        var rate = ServiceRate(initial: 500, concurrency: 4)
        let start = ContinuousClock.now
        #expect(rate.perSecond(at: start) == 500)
        // Five jobs a second arrive, each batch of 5 takes 500 ms of processing: 2 s of evidence,
        // capacity 40/s, not 5/s.
        for second in 0..<4 { rate.record(jobs: 5, processing: .milliseconds(500), at: start + .seconds(second)) }
        #expect(abs((rate.perSecond(at: start + .seconds(4)) ?? 0) - 40) < 0.01)
        // Batches older than 5 s before the newest leave the window: the capacity follows the newest.
        rate.record(jobs: 300, processing: .milliseconds(300), at: start + .seconds(30))
        #expect(abs((rate.perSecond(at: start + .seconds(30)) ?? 0) - 4_000) < 1)
    }

    @Test("many small batches: the estimate is the five-second window's jobs over its processing time, as summed afresh")
    func runningWindowMatchesASum() {
        var rate = ServiceRate(concurrency: 3)
        let start = ContinuousClock.now
        var generator = SplitMix64(state: 0x5EED)
        var history: [(at: ContinuousClock.Instant, jobs: Int, seconds: Double)] = []
        // 30,000 batches of 1-3 jobs every 0.5 ms (2,000 batches a second, 10,000 in the window).
        for i in 0..<30_000 {
            let at = start + .microseconds(500 * i)
            let jobs = Int(generator.next() % 3) + 1
            let processing = Duration.microseconds(Int64(200 + generator.next() % 2_000))
            rate.record(jobs: jobs, processing: processing, at: at)
            history.append((at, jobs, processing.seconds))
            if i % 997 == 0 || i == 29_999 {
                let window = history.filter { $0.at >= at - .seconds(5) }
                let expected = Double(window.reduce(0) { $0 + $1.jobs }) / window.reduce(0) { $0 + $1.seconds } * 3
                guard let measured = rate.perSecond(at: at) else { continue }
                #expect(abs(measured - expected) / expected < 1e-9, "batch \(i): \(measured) against \(expected)")
            }
        }
        #expect(rate.perSecond(at: start + .seconds(15)) != nil)
    }

    @Test("an idle spell keeps the measured capacity for a minute; before that, too little evidence is no estimate")
    func evidenceAndAge() {
        var rate = ServiceRate(concurrency: 2)
        let start = ContinuousClock.now
        #expect(rate.perSecond(at: start) == nil)
        // A storm's first batch: 5 jobs in 300 ms (cold connections). Alone it would read as 33/s.
        rate.record(jobs: 5, processing: .milliseconds(300), at: start)
        #expect(rate.perSecond(at: start) == nil)
        // Four full batches later the cold one is diluted: 261 jobs in 0.46 s of processing, x2.
        for i in 1...4 { rate.record(jobs: 64, processing: .milliseconds(40), at: start + .milliseconds(100 * i)) }
        let measured = rate.perSecond(at: start + .seconds(1))
        #expect(measured.map { abs($0 - 261 / 0.46 * 2) < 1 } == true)
        // Idle for 50 s: still that capacity. Idle for over a minute: unknown again.
        #expect(rate.perSecond(at: start + .seconds(50)) == measured)
        #expect(rate.perSecond(at: start + .seconds(61)) == nil)
    }

    @Test("with no measured rate the scheduler queues a storm's new sessions instead of shedding them")
    func unknownRateShedsNothing() {
        var s = JobScheduler(policy: SchedulingPolicy())
        let now: Int64 = 1_700_000_000_000
        func message(_ id: String, _ priority: String) -> KafkaMessage {
            let body = #"{"id":"\#(id)","tenant":"acme","account":"\#(id)","spc":"AAAA","priority":"\#(priority)"}"#
            return KafkaMessage(topic: "jobs", partition: 0, offset: 0, key: nil, value: Array(body.utf8), headers: [])
        }
        // 20,000 jobs already ahead: at any guessed rate under 667/s a new session would wait over 30 s.
        let unknown = s.push(message("n1", "new"), inFlight: 20_000, rate: nil, now: now)
        #expect(unknown.retryAfterMilliseconds == nil)
        let measuredSlow = s.push(message("n2", "new"), inFlight: 20_000, rate: 500, now: now)
        #expect(measuredSlow.retryAfterMilliseconds != nil)
    }
}

@Suite("Job scheduler: class topics and floors")
struct JobSchedulerFloorTests {
    let now: Int64 = 1_000_000

    @Test("a continuity backlog leaves new sessions their share of every batch; without the floor they wait for all of it")
    func newSessionFloor() {
        var s = JobScheduler(policy: SchedulingPolicy())
        for i in 0..<640 { s.push(JobSchedulerTests.message("c\(i)", priority: .continuity), inFlight: 0, rate: 1_000_000, now: now) }
        for i in 0..<40 { s.push(JobSchedulerTests.message("n\(i)"), inFlight: 0, rate: 1_000_000, now: now) }
        let batch = s.nextBatch(limit: 64, now: now)
        #expect(batch.count == 64)
        #expect(batch.filter { $0.priority == .new }.count == 8)
        #expect(batch.prefix(56).allSatisfy { $0.priority == .continuity })

        var strict = SchedulingPolicy()
        strict.newSessionShare = 0
        var t = JobScheduler(policy: strict)
        for i in 0..<640 { t.push(JobSchedulerTests.message("c\(i)", priority: .continuity), inFlight: 0, rate: 1_000_000, now: now) }
        t.push(JobSchedulerTests.message("n0"), inFlight: 0, rate: 1_000_000, now: now)
        #expect(t.nextBatch(limit: 64, now: now).allSatisfy { $0.priority == .continuity })
    }

    @Test("a share below one job per batch still holds, as credit across batches")
    func shareAsCredit() {
        var s = JobScheduler(policy: SchedulingPolicy())
        for i in 0..<400 { s.push(JobSchedulerTests.message("c\(i)", priority: .continuity), inFlight: 0, rate: 1_000_000, now: now) }
        for i in 0..<10 { s.push(JobSchedulerTests.message("p\(i)", priority: .prefetch), inFlight: 0, rate: 1_000_000, now: now) }
        // 1/64 of an 8-job batch: one prefetch job every eighth batch.
        var prefetch = 0
        for _ in 0..<16 { prefetch += s.nextBatch(limit: 8, now: now).filter { $0.priority == .prefetch }.count }
        #expect(prefetch == 2)
    }

    @Test("in one-job batches the floors never put prefetch ahead of new sessions")
    func floorsFitTheBatch() throws {
        var s = JobScheduler(policy: SchedulingPolicy())
        for i in 0..<200 { s.push(JobSchedulerTests.message("c\(i)", priority: .continuity), inFlight: 0, rate: 1_000_000, now: now) }
        for i in 0..<50 { s.push(JobSchedulerTests.message("n\(i)"), inFlight: 0, rate: 1_000_000, now: now) }
        for i in 0..<50 { s.push(JobSchedulerTests.message("p\(i)", priority: .prefetch), inFlight: 0, rate: 1_000_000, now: now) }
        var order: [LicenseJob.Priority] = []
        for _ in 0..<100 { order += s.nextBatch(limit: 1, now: now).map(\.priority) }
        let firstPrefetch = order.firstIndex(of: .prefetch)
        let newSessions = order.filter { $0 == .new }.count
        // While new sessions wait, their floor is served first; prefetch gets a slot only once new's
        // credit is spent, never at new sessions' expense.
        #expect(newSessions >= 10, "\(order)")
        // The batch where both floors first come due goes to new sessions; prefetch follows.
        let first = try #require(firstPrefetch)
        #expect(order[first - 1] == .new, "\(order.enumerated().filter { $0.element != .continuity })")
    }

    @Test("a class topic's class wins over the job's priority field; the requests topic keeps the field")
    func topicDecidesTheClass() {
        var s = JobScheduler(policy: SchedulingPolicy())
        let job = s.push(JobSchedulerTests.message("x", priority: .prefetch), inFlight: 0, rate: 1_000, topicClass: .continuity, now: now)
        #expect(job.priority == .continuity)
        #expect(s.push(JobSchedulerTests.message("y", priority: .prefetch), inFlight: 0, rate: 1_000, now: now).priority == .prefetch)
        let topics = RequestTopics(requestsTopic: "fps.license.requests", classTopics: true)
        #expect(topics.all == ["fps.license.requests", "fps.license.requests.continuity", "fps.license.requests.new", "fps.license.requests.prefetch"])
        #expect(topics.priority(ofTopic: "fps.license.requests.new") == .new)
        #expect(topics.priority(ofTopic: "fps.license.requests") == nil)
        #expect(RequestTopics(requestsTopic: "jobs", classTopics: false).all == ["jobs"])
    }
}
