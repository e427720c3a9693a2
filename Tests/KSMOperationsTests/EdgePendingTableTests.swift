import KSMOperations
import KSMService
import Kafka
import Synchronization
import Testing

/// The edge's pending table as a value: every path in and out of a request, with integers for
/// waiters and strings for replies, so no continuation, clock or Kafka is needed.
@Suite struct EdgePendingTableTests {
    typealias Table = EdgePendingTable<Int, String>
    /// A deadline no test reaches.
    static let later = ContinuousClock.now + .seconds(3_600)

    @Test func aReplyForAWaitingRequestResumesItsWaiterOnce() {
        var table = Table(capacity: 4)
        #expect(table.reserve("a", deadline: Self.later) == .reserved)
        guard case .suspend = table.wait("a", waiter: 7) else {
            Issue.record("expected suspend")
            return
        }
        guard case .resume(let waiter, let reply) = table.receive("a", reply: "ckc") else {
            Issue.record("expected resume")
            return
        }
        #expect(waiter == 7 && reply == "ckc")
        // A redelivered job's second reply is a duplicate while the request is still in the table.
        guard case .duplicate = table.receive("a", reply: "ckc") else {
            Issue.record("expected duplicate")
            return
        }
        #expect(table.remove("a") == nil)
        #expect(table.count == 0)
        // After removal the same ID is unknown: a late reply is unmatched.
        guard case .unmatched = table.receive("a", reply: "late") else {
            Issue.record("expected unmatched")
            return
        }
    }

    @Test func aReplyBeforeTheWaiterIsKeptAndHandedOver() {
        var table = Table(capacity: 1)
        #expect(table.reserve("a", deadline: Self.later) == .reserved)
        guard case .kept = table.receive("a", reply: "fast") else {
            Issue.record("expected kept")
            return
        }
        guard case .resume(let reply) = table.wait("a", waiter: 1) else {
            Issue.record("expected resume")
            return
        }
        #expect(reply == "fast")
        table.remove("a")
        #expect(table.count == 0)
    }

    @Test func aKeptReplyOutlivesTheDeadline() {
        var table = Table(capacity: 1)
        _ = table.reserve("a", deadline: Self.later)
        _ = table.receive("a", reply: "r")
        // The deadline fires between the reply and the waiter: the reply is still answered.
        #expect(table.expire("a") == nil)
        guard case .resume(let reply) = table.wait("a", waiter: 1) else {
            Issue.record("expected resume")
            return
        }
        #expect(reply == "r")
    }

    @Test func theDeadlineHandsOutTheWaiterAndALaterReplyIsADuplicate() {
        var table = Table(capacity: 2)
        _ = table.reserve("a", deadline: Self.later)
        _ = table.wait("a", waiter: 3)
        #expect(table.expire("a") == 3)
        #expect(table.expire("a") == nil)
        guard case .duplicate = table.receive("a", reply: "late") else {
            Issue.record("expected duplicate")
            return
        }
        #expect(table.remove("a") == nil)
        #expect(table.count == 0)
    }

    @Test func aDeadlineBeforeTheWaiterLeavesNothingToWaitFor() {
        var table = Table(capacity: 2)
        _ = table.reserve("a", deadline: Self.later)
        #expect(table.expire("a") == nil)
        guard case .gone = table.wait("a", waiter: 1) else {
            Issue.record("expected gone")
            return
        }
        table.remove("a")
        #expect(table.count == 0)
    }

    @Test func theSweepSkipsRequestsThatLeftAndKeepsLaterDeadlines() {
        var table = Table(capacity: 4)
        let t0 = ContinuousClock.now
        _ = table.reserve("gone", deadline: t0 + .seconds(1))
        table.remove("gone")
        _ = table.reserve("due", deadline: t0 + .seconds(2))
        _ = table.wait("due", waiter: 7)
        _ = table.reserve("later", deadline: t0 + .seconds(9))
        _ = table.wait("later", waiter: 8)
        #expect(table.expireDue(at: t0 + .seconds(3)) == [7])
        guard case .duplicate = table.receive("due", reply: "late") else {
            Issue.record("a reply after the deadline is a duplicate")
            return
        }
        #expect(table.expireDue(at: t0 + .seconds(10)) == [8])
        #expect(table.count == 2)
    }

    @Test func removeOnEveryPathEmptiesTheTable() {
        var table = Table(capacity: 8)
        // Produced-but-failed (reserved only), waiting (cancelled), answered, expired.
        for id in ["reserved", "waiting", "answered", "expired"] { #expect(table.reserve(id, deadline: Self.later) == .reserved) }
        _ = table.wait("waiting", waiter: 1)
        _ = table.wait("answered", waiter: 2)
        _ = table.receive("answered", reply: "r")
        _ = table.wait("expired", waiter: 4)
        _ = table.expire("expired")
        #expect(table.remove("reserved") == nil)
        // A waiter still installed when its request ends is handed back, to be resumed with "no reply".
        #expect(table.remove("waiting") == 1)
        #expect(table.remove("answered") == nil)
        #expect(table.remove("expired") == nil)
        #expect(table.count == 0)
    }

    @Test func capacityRefusesTheNextAndFreesOnRemove() {
        var table = Table(capacity: 2)
        #expect(table.reserve("a", deadline: Self.later) == .reserved)
        #expect(table.reserve("b", deadline: Self.later) == .reserved)
        #expect(table.reserve("c", deadline: Self.later) == .atCapacity)
        #expect(table.reserve("a", deadline: Self.later) == .duplicate)
        table.remove("a")
        #expect(table.reserve("c", deadline: Self.later) == .reserved)
        #expect(table.count == 2)
    }

    @Test func expireAllGivesUpEveryWaiter() {
        var table = Table(capacity: 4)
        for id in ["a", "b", "c"] { _ = table.reserve(id, deadline: Self.later) }
        _ = table.wait("a", waiter: 1)
        _ = table.wait("b", waiter: 2)
        #expect(Set(table.expireAll()) == [1, 2])
        guard case .gone = table.wait("c", waiter: 3) else {
            Issue.record("expected gone")
            return
        }
        for id in ["a", "b", "c"] { table.remove(id) }
        #expect(table.count == 0)
    }
}

/// The locked table with real continuations: each way out of a wait, and no entry left behind.
@Suite(.timeLimit(.minutes(1))) struct EdgeReplyWaitersTests {
    static func reply(_ id: String) -> LicenseReply { LicenseReply(id: id, status: .ok, reason: "", ckc: [1, 2, 3], rule: "lease:granted") }

    @Test func aReplyDeliveredWhileWaitingAnswersAndTheEntryLeaves() async {
        let waiters = EdgeReplyWaiters(capacity: 4)
        #expect(waiters.reserve("c-1", deadline: .now + .seconds(30)) == .reserved)
        let task = Task {
            defer { waiters.remove("c-1") }
            return await waiters.wait("c-1")
        }
        try? await Task.sleep(for: .milliseconds(50))
        #expect(waiters.deliver("c-1", reply: Self.reply("job")) == .matched)
        guard case .reply(let reply) = await task.value else {
            Issue.record("expected the reply")
            return
        }
        #expect(reply.ckc == [1, 2, 3])
        #expect(waiters.count == 0)
        #expect(waiters.deliver("c-1", reply: Self.reply("job")) == .unmatched)
    }

    @Test func theDeadlineSweepAnswersTimedOutAndTheEntryLeaves() async throws {
        let waiters = EdgeReplyWaiters(capacity: 4)
        let sweep = Task { try await waiters.run() }
        defer { sweep.cancel() }
        let started = ContinuousClock.now
        _ = waiters.reserve("c-2", deadline: started + .milliseconds(100))
        let result = await waiters.wait("c-2")
        waiters.remove("c-2")
        guard case .timedOut = result else {
            Issue.record("expected a timeout, got \(result)")
            return
        }
        #expect(ContinuousClock.now - started >= .milliseconds(100))
        #expect(waiters.count == 0)
    }

    @Test func aSweepGivesUpOnlyTheRequestsPastTheirDeadlineSoonestFirst() async {
        let waiters = EdgeReplyWaiters(capacity: 4)
        let t0 = ContinuousClock.now
        // Reserved out of deadline order, as a slow upload reserves after faster requests.
        _ = waiters.reserve("late", deadline: t0 + .seconds(9))
        _ = waiters.reserve("early", deadline: t0 + .seconds(1))
        _ = waiters.reserve("middle", deadline: t0 + .seconds(5))
        // Whether or not each waiter is installed yet, the outcome is the same.
        let early = Task { await waiters.wait("early") }
        let middle = Task { await waiters.wait("middle") }
        #expect(waiters.expireDue(at: t0) == 0)
        waiters.expireDue(at: t0 + .seconds(2))
        guard case .timedOut = await early.value else {
            Issue.record("expected the early request to time out")
            return
        }
        // The middle request was not given up with the early one: its reply still answers it.
        #expect(waiters.deliver("middle", reply: Self.reply("job")) == .matched)
        guard case .reply = await middle.value else {
            Issue.record("expected the middle request's reply")
            return
        }
        // The late request was never waited on: the sweep marks it, and its waiter, when it comes, gets no reply.
        waiters.expireDue(at: t0 + .seconds(10))
        guard case .timedOut = await waiters.wait("late") else {
            Issue.record("expected the late request to time out")
            return
        }
        for id in ["early", "middle", "late"] { waiters.remove(id) }
        #expect(waiters.count == 0)
    }

    @Test func aDeliveryFailureEndsTheWaitAtOnce() async {
        let waiters = EdgeReplyWaiters(capacity: 4)
        _ = waiters.reserve("c-5", deadline: .now + .seconds(30))
        let task = Task { await waiters.wait("c-5") }
        try? await Task.sleep(for: .milliseconds(50))
        waiters.fail("c-5", KafkaError(code: .messageTimedOut, message: "test"))
        guard case .notQueued(let error) = await task.value else {
            Issue.record("expected the delivery failure")
            return
        }
        #expect(error.code == .messageTimedOut)
        // A reply after the failure is a duplicate, not a second answer.
        #expect(waiters.deliver("c-5", reply: Self.reply("job")) == .duplicate)
        waiters.remove("c-5")
        #expect(waiters.count == 0)
    }

    @Test func aReplyBeforeTheWaitIsAnsweredAtOnce() async {
        let waiters = EdgeReplyWaiters(capacity: 4)
        _ = waiters.reserve("c-3", deadline: .now + .seconds(30))
        #expect(waiters.deliver("c-3", reply: Self.reply("job")) == .matched)
        let result = await waiters.wait("c-3")
        waiters.remove("c-3")
        guard case .reply = result else {
            Issue.record("expected the reply")
            return
        }
        #expect(waiters.count == 0)
    }

    @Test func aCancelledRequestEndsCancelledAndLeavesNoEntry() async {
        let waiters = EdgeReplyWaiters(capacity: 4)
        _ = waiters.reserve("c-4", deadline: .now + .seconds(30))
        let task = Task {
            defer { waiters.remove("c-4") }
            return await waiters.wait("c-4")
        }
        try? await Task.sleep(for: .milliseconds(50))
        task.cancel()
        guard case .cancelled = await task.value else {
            Issue.record("expected cancelled")
            return
        }
        #expect(waiters.count == 0)
    }

    @Test func cancelAllReleasesEveryWaiter() async {
        let waiters = EdgeReplyWaiters(capacity: 8)
        let ids = (0..<5).map { "c-\($0)" }
        for id in ids { _ = waiters.reserve(id, deadline: .now + .seconds(30)) }
        let results = Task {
            await withTaskGroup(of: EdgeWaitResult.self, returning: [EdgeWaitResult].self) { group in
                for id in ids {
                    group.addTask {
                        defer { waiters.remove(id) }
                        return await waiters.wait(id)
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        try? await Task.sleep(for: .milliseconds(100))
        waiters.cancelAll()
        let all = await results.value
        #expect(all.count == 5)
        #expect(all.allSatisfy { if case .cancelled = $0 { true } else { false } })
        #expect(waiters.count == 0)
    }

    @Test func theCountReportedIsTheTablesAfterEachChange() async {
        let counts = Mutex<[Int]>([])
        let waiters = EdgeReplyWaiters(capacity: 2, onCount: { count in counts.withLock { $0.append(count) } })
        _ = waiters.reserve("a", deadline: .now + .seconds(30))
        _ = waiters.reserve("b", deadline: .now + .seconds(30))
        _ = waiters.reserve("c", deadline: .now + .seconds(30))
        waiters.remove("a")
        waiters.remove("b")
        waiters.remove("c")
        #expect(counts.withLock { $0 } == [1, 2, 2, 1, 0, 0])
    }

    @Test func correlationIDsAreUniquePerStart() {
        let first = EdgeCorrelationIDs(nonce: 1)
        let second = EdgeCorrelationIDs(nonce: 2)
        let a = (0..<1000).map { _ in first.next() }
        #expect(Set(a).count == 1000)
        #expect(a[0] == "0000000000000001-1")
        #expect(second.next() != a[0])
        #expect(EdgeCorrelationIDs().nonce.count == 16)
    }
}
