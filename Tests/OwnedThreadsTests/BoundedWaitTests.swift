import Foundation
import Synchronization
import Testing

@testable import OwnedThreads

/// Waiting for work at most a budget: the first of the result and the timer wins, the loser ends.
@Suite("Bounded wait", .timeLimit(.minutes(1)))
struct BoundedWaitTests {
    @Test("work that finishes within its budget gives its result without waiting out the budget")
    func resultBeforeTheBudget() async {
        let started = ContinuousClock.now
        let value = await BoundedWait.result(within: .seconds(30)) { 42 }
        #expect(value == 42)
        #expect(ContinuousClock.now - started < .seconds(10), "the losing timer was not cancelled")
    }

    @Test("work that outlasts its budget gives nil after the budget, and runs on to its end unobserved")
    func nilAfterTheBudget() async throws {
        let finished = Atomic(false)
        let started = ContinuousClock.now
        let value = await BoundedWait.result(within: .milliseconds(100)) { () async -> Int in
            // Blocks a thread of its own, as the librdkafka calls this is for do.
            await OwnedThread.run(name: "bounded-wait-test") { usleep(3_000_000) }
            finished.store(true, ordering: .relaxed)
            return 1
        }
        #expect(value == nil)
        let took = ContinuousClock.now - started
        // Far below the work's 3 s, with room for a loaded host.
        #expect(took >= .milliseconds(100) && took < .milliseconds(2_500))
        let finishedInTime = finished.load(ordering: .relaxed)
        #expect(!finishedInTime)
        let patience = ContinuousClock.now + .seconds(20)
        while !finished.load(ordering: .relaxed), ContinuousClock.now < patience { try await Task.sleep(for: .milliseconds(50)) }
        let finishedLater = finished.load(ordering: .relaxed)
        #expect(finishedLater, "abandoned work is not cancelled")
    }

    @Test("a cancelled waiter gives nil at once, whatever the budget")
    func cancelledWaiterGivesUp() async {
        let waiter = Task {
            await BoundedWait.result(within: .seconds(30)) { () async -> Int in
                await OwnedThread.run(name: "bounded-wait-test") { usleep(300_000) }
                return 1
            }
        }
        try? await Task.sleep(for: .milliseconds(20))
        let started = ContinuousClock.now
        waiter.cancel()
        #expect(await waiter.value == nil)
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}
