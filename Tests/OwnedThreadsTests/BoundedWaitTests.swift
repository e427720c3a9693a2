import Foundation
import Synchronization
import Testing

@testable import OwnedThreads

/// Waiting for work at most a budget: the first of the result and the timer wins, the loser ends.
///
/// The work blocks until the test releases it, so a nil can only come from the budget or the
/// cancellation, never from the work finishing early; budgets far longer than the time limit show a
/// timer that was not cancelled. No check depends on how fast a crowded host schedules the test.
@Suite("Bounded wait", .timeLimit(.minutes(5)))
struct BoundedWaitTests {
    @Test("work that finishes within its budget gives its result without waiting out the budget")
    func resultBeforeTheBudget() async {
        let started = ContinuousClock.now
        let value = await BoundedWait.result(within: .seconds(3_600)) { 42 }
        #expect(value == 42)
        #expect(ContinuousClock.now - started < .seconds(240), "the losing timer was not cancelled")
    }

    @Test("work that outlasts its budget gives nil after the budget, and runs on to its end unobserved")
    func nilAfterTheBudget() async throws {
        let release = Atomic(false)
        let finished = Atomic(false)
        let started = ContinuousClock.now
        let value = await BoundedWait.result(within: .milliseconds(100)) { () async -> Int in
            // Blocks a thread of its own, as the librdkafka calls this is for do.
            await OwnedThread.run(name: "bounded-wait-test") {
                while !release.load(ordering: .relaxed) { usleep(1_000) }
            }
            finished.store(true, ordering: .relaxed)
            return 1
        }
        #expect(value == nil)
        #expect(ContinuousClock.now - started >= .milliseconds(100))
        let finishedInTime = finished.load(ordering: .relaxed)
        #expect(!finishedInTime)
        release.store(true, ordering: .relaxed)
        let patience = ContinuousClock.now + .seconds(240)
        while !finished.load(ordering: .relaxed), ContinuousClock.now < patience { try await Task.sleep(for: .milliseconds(50)) }
        let finishedLater = finished.load(ordering: .relaxed)
        #expect(finishedLater, "abandoned work is not cancelled")
    }

    @Test("a cancelled waiter gives nil at once, whatever the budget")
    func cancelledWaiterGivesUp() async {
        let release = Atomic(false)
        let waiter = Task {
            await BoundedWait.result(within: .seconds(3_600)) { () async -> Int in
                await OwnedThread.run(name: "bounded-wait-test") {
                    while !release.load(ordering: .relaxed) { usleep(1_000) }
                }
                return 1
            }
        }
        try? await Task.sleep(for: .milliseconds(20))
        waiter.cancel()
        #expect(await waiter.value == nil)
        release.store(true, ordering: .relaxed)
    }
}
