import Kafka
import Testing

@testable import KSMService

/// A store outage under load, as the scheduler sees it: batches that spend their time in retry
/// sleeps and `WAIT` timeouts, then a backlog to drain once the store is back. Capacity is measured
/// on an explicit clock (each batch recorded at an instant the test chooses).
@Suite("Scheduling through a store outage")
struct StoreOutageSchedulingTests {
    let start = ContinuousClock.now

    /// A healthy worker: 1,200 jobs in 1.2 s of processing with 4 batches at once, 4,000 jobs/s.
    func healthy() -> ServiceRate {
        var rate = ServiceRate(concurrency: 4)
        for i in 0..<10 { rate.record(jobs: 120, processing: .milliseconds(120), at: start + .milliseconds(100 * i)) }
        return rate
    }

    @Test("batches that met a failing store are no sample: the capacity measured before the outage stands through it")
    func outageKeepsTheHealthyCapacity() throws {
        var rate = healthy()
        let before = try #require(rate.perSecond(at: start + .seconds(1)))
        #expect(abs(before - 4_000) < 1)
        // 8 s of a Redis Cluster failover under WAIT: every batch of a dozen jobs takes 0.8 s of
        // WAIT timeouts and retry sleeps before it is answered storeUnavailable.
        for i in 0..<40 { rate.recordStoreFailure(at: start + .seconds(1) + .milliseconds(200 * i)) }
        #expect(rate.perSecond(at: start + .seconds(9)) == before)
    }

    @Test("a batch the store stalled for seconds before serving it is no sample either")
    func stallIsNoSample() throws {
        var rate = healthy()
        let before = try #require(rate.perSecond(at: start + .seconds(1)))
        // A cluster client following a failover inside one call: 12 jobs answered after 3 s. At
        // 4,000 jobs/s with 4 batches at once they take 12 ms; counted, eight such batches read as
        // about 200 jobs/s beside the healthy window, and a 2,000-job backlog as a 10 s wait.
        for i in 0..<8 {
            let sampled = rate.record(jobs: 12, processing: .seconds(3), at: start + .seconds(4) + .milliseconds(10 * i))
            #expect(!sampled)
        }
        #expect(rate.perSecond(at: start + .seconds(5)) == before)
        // Slower than usual but no stall (a loaded host): a sample like any other.
        let sampled = rate.record(jobs: 12, processing: .milliseconds(300), at: start + .seconds(5))
        #expect(sampled)
    }

    @Test("a worker that really became much slower is measured afresh once its estimate ages out")
    func realSlowdownIsLearned() throws {
        var rate = healthy()
        // From here every batch takes 2 s for 128 jobs, 16 times what 4,000 jobs/s predicts: stalls.
        for i in 0..<120 { rate.record(jobs: 128, processing: .seconds(2), at: start + .seconds(1) + .milliseconds(500 * i)) }
        #expect(rate.perSecond(at: start + .seconds(61)) == nil)
        // The estimate is gone, so the next batches are samples again: 256 jobs/s.
        let sampled = rate.record(jobs: 128, processing: .seconds(2), at: start + .seconds(62))
        #expect(sampled)
        #expect(rate.perSecond(at: start + .seconds(62)) == 256)
    }

    @Test("after the store is back, slow cold batches do not replace the estimate; a window with enough jobs does")
    func recoveryNeedsEnoughJobs() throws {
        var rate = healthy()
        let before = try #require(rate.perSecond(at: start + .seconds(1)))
        rate.recordStoreFailure(at: start + .seconds(2))
        // Reconnects and scripts loaded anew: 2.4 s of processing for 60 jobs, more than minimumSeconds.
        for i in 0..<6 { rate.record(jobs: 10, processing: .milliseconds(400), at: start + .seconds(3) + .milliseconds(10 * i)) }
        #expect(rate.perSecond(at: start + .seconds(4)) == before)
        // Then the backlog drains in full batches: 256 jobs in the window replace the estimate.
        for i in 0..<2 { rate.record(jobs: 128, processing: .milliseconds(100), at: start + .seconds(4) + .milliseconds(100 * i)) }
        let after = try #require(rate.perSecond(at: start + .seconds(5)))
        #expect(abs(after - Double(60 + 256) / 2.6 * 4) < 1)
    }

    @Test("an outage does not age the estimate; a minute after the last batch of any kind it is forgotten")
    func outageDoesNotAgeTheEstimate() throws {
        var rate = healthy()
        let before = try #require(rate.perSecond(at: start + .seconds(1)))
        // Failing batches for 70 s: longer than maximumAge, yet the capacity is the same machine's.
        for second in stride(from: 5, through: 70, by: 5) { rate.recordStoreFailure(at: start + .seconds(second)) }
        #expect(rate.perSecond(at: start + .seconds(100)) == before)
        #expect(rate.perSecond(at: start + .seconds(131)) == nil)
    }

    @Test("a worker with no estimate yet gets none from failing batches, and its first estimate after them needs the usual evidence")
    func noEstimateFromFailures() {
        var rate = ServiceRate(concurrency: 2)
        for i in 0..<10 { rate.recordStoreFailure(at: start + .milliseconds(500 * i)) }
        #expect(rate.perSecond(at: start + .seconds(5)) == nil)
        rate.record(jobs: 20, processing: .seconds(2), at: start + .seconds(6))
        #expect(rate.perSecond(at: start + .seconds(6)) == 20)
    }

    @Test(
        "every retry-after lies within the predicted wait and never past the predicted backlog clearance",
        arguments: [
            LicenseJob.Priority.prefetch, .new,
        ])
    func retryAfterWithinClearance(priority: LicenseJob.Priority) {
        var policy = SchedulingPolicy()
        policy.newSessionMaximumWait = .seconds(2)
        var generator = SystemRandomNumberGenerator()
        for round in 0..<300 {
            var s = JobScheduler(policy: policy)
            let rate = Double.random(in: 10...5_000, using: &generator)
            let queuedAbove = Int.random(in: 0...3_000, using: &generator)
            let queuedBelow = Int.random(in: 0...3_000, using: &generator)
            // Jobs queued in the classes above this one and below it (prefetch behind new sessions).
            for i in 0..<queuedAbove { s.push(JobSchedulerTests.message("c\(i)", priority: .continuity), inFlight: 0, rate: nil) }
            if priority == .new {
                for i in 0..<queuedBelow { s.push(JobSchedulerTests.message("p\(i)", priority: .prefetch), inFlight: 0, rate: nil) }
            }
            let taken = Int.random(in: 0...20_000, using: &generator)
            let job = s.push(JobSchedulerTests.message("j\(round)", priority: priority), inFlight: taken, rate: rate)
            let below = priority == .new ? queuedBelow : 0
            let wait = Double(taken + queuedAbove) / rate
            let clearance = Double(taken + queuedAbove + below) / rate
            let limit = priority == .new ? 2.0 : 1.0
            guard let hint = job.retryAfterMilliseconds else {
                #expect(wait <= limit, "not shed with a predicted wait of \(wait) s")
                continue
            }
            #expect(wait > limit)
            #expect(Double(hint) <= clearance * 1000, "retry-after \(hint) ms past the clearance of \(clearance) s")
            #expect(Double(hint) <= wait * 1000 + 1)
            // Back while at most its limit of work is ahead, or after half its wait at the latest.
            #expect(Double(hint) >= min(max(wait - limit, wait / 2), 60) * 1000 - 1)
            #expect(hint <= 60_000)
        }
    }

    @Test("the retry-after never exceeds the clearance, even below the 200 ms floor")
    func floorYieldsToClearance() {
        #expect(JobScheduler.retryAfterMilliseconds(wait: 0.1, limit: 0.05, clearance: 0.15) <= 150)
        #expect(JobScheduler.retryAfterMilliseconds(wait: 0.15, limit: 0.1, clearance: 5) == 200)
        #expect(JobScheduler.retryAfterMilliseconds(wait: 500, limit: 30, clearance: 900) == 60_000)
    }

    /// What the worker's batches met while a viewer's job waited.
    enum Trouble: CaseIterable {
        /// Every batch answered `storeUnavailable` after 10 s of retries and timeouts.
        case storeFailed
        /// Every batch answered after the store stalled it for 10 s.
        case storeStalled
        /// No trouble: a backlog a healthy worker needs half a minute for.
        case overload
    }

    @Test(
        "while the store fails or stalls, new sessions behind a backlog wait in the queue: the wait comes from the last healthy capacity",
        arguments: Trouble.allCases)
    func newSessionsQueueThroughAnOutage(trouble: Trouble) async throws {
        let state = WorkerState(maximumInFlight: 100_000, concurrentBatches: 1)
        var offset: Int64 = 0
        func arrive(_ count: Int) async {
            let messages = (0..<count).map { i in JobSchedulerTests.message("m\(offset + Int64(i))", offset: offset + Int64(i)) }
            offset += Int64(count)
            await state.enqueue(messages)
        }
        // Healthy: 512 jobs in 0.5 s of processing, 1,024 jobs/s.
        await arrive(512)
        for _ in 0..<4 {
            let batch = try #require(await state.nextBatch(limit: 128))
            await state.processed(jobs: batch.count, in: .milliseconds(125))
        }
        if trouble == .overload {
            // 33,000 jobs ahead: 32 s at 1,024 jobs/s, past the new-session limit of 30 s.
            await arrive(33_000)
        } else {
            // The store goes away: 2,000 new sessions queue up while each batch of 128 spends 10 s
            // in the store. Counted as work, that reads as 25 jobs/s: a minute's wait.
            await arrive(2_000)
            for _ in 0..<4 {
                let batch = try #require(await state.nextBatch(limit: 128))
                await state.processed(jobs: batch.count, in: .seconds(10), storeFailed: trouble == .storeFailed)
            }
        }
        // A viewer presses play.
        await arrive(1)
        var shed: [Int64] = []
        while await state.queuedByClass.values.reduce(0, +) > 0, let batch = await state.nextBatch(limit: 40_000) {
            shed += batch.compactMap(\.retryAfterMilliseconds)
        }
        if trouble == .overload {
            // Every job past 30 s of work is shed (the viewer too, 32 s back), each told to come back
            // after half its wait at the latest and before all of it is done.
            #expect((2_200...2_400).contains(shed.count))
            #expect(shed.allSatisfy { (15_000...32_300).contains($0) }, "\(shed.min() ?? 0)...\(shed.max() ?? 0)")
        } else {
            // About 1,500 jobs ahead: 1.5 s at the healthy rate.
            #expect(shed.isEmpty, "new sessions shed during a store outage: \(shed.prefix(5))")
        }
    }
}
