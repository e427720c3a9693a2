import Synchronization
import Testing

@testable import Kafka

/// The consumer's state machine on its own: every transition and the action it returns, without
/// librdkafka or threads (continuations are real, resumed by performing the returned actions).
@Suite(.timeLimit(.minutes(1)))
struct ConsumerStateMachineTests {
    typealias Machine = ConsumerStateMachine

    let p0 = TopicPartition(topic: "t", partition: 0)
    let p1 = TopicPartition(topic: "t", partition: 1)
    let p2 = TopicPartition(topic: "t", partition: 2)

    @Test("a member joins with its first assignment, even an empty one; closing before that abandons the client")
    func joiningEndsWithTheFirstAssignment() {
        var never = Machine(capacity: 4)
        #expect(!never.hasJoined)
        #expect(never.beginClosing() == .leaveGroupAndAbandonClient)
        #expect(stateName(never) == "closing")

        var joined = Machine(capacity: 4)
        #expect(joined.partitionsAssigned([], incremental: true) == .unchanged)
        #expect(joined.hasJoined)
        #expect(stateName(joined) == "running")
        #expect(joined.beginClosing() == .leaveGroup)
        #expect(joined.beginClosing() == .leaveGroup, "closing twice changes nothing")
    }

    @Test("assignments add up when incremental and replace otherwise")
    func assignmentsAddUpOrReplace() {
        var m = Machine(capacity: 4)
        _ = m.partitionsAssigned([p0], incremental: true)
        _ = m.partitionsAssigned([p1], incremental: true)
        #expect(m.assignment == [p0, p1])
        _ = m.partitionsAssigned([p2], incremental: false)
        #expect(m.assignment == [p2])
        m.assignmentLost()
        #expect(m.assignment.isEmpty)
    }

    @Test("next hands out buffered events in order, then parks, and the next event resumes it directly")
    func nextDeliversInOrderThenParks() async {
        var m = Machine(capacity: 4)
        _ = m.partitionsAssigned([p0], incremental: true)
        #expect(isBuffered(m.enqueue(.assigned([p0]))))
        #expect(isBuffered(m.enqueue(message(p0, 0))))
        #expect(m.bufferedMessages == 1)
        #expect(await ask(&m) == ("deliver", "assigned [t[0]]"))
        #expect(await ask(&m) == ("deliver", "message t[0]@0"))
        #expect(m.bufferedMessages == 0)
        let parked = await ask(&m) { m in
            #expect(waiters(m) == (next: true, closers: 0))
            m.enqueue(message(p0, 1)).perform()
        }
        #expect(parked == ("suspend", "message t[0]@1"))
        #expect(m.bufferedMessages == 0, "handed straight to the waiter, never counted")
        #expect(waiters(m) == (next: false, closers: 0))
    }

    @Test("a revoke drops buffered messages of its partitions, puts .revoked first, and waits until the handed-out event is acknowledged")
    func revocationWaitsForTheHandedOutEvent() async {
        var m = Machine(capacity: 4)
        _ = m.partitionsAssigned([p0, p1], incremental: true)
        _ = m.pauseRequested([p0])
        _ = m.enqueue(message(p0, 0))
        _ = m.enqueue(message(p1, 0))
        _ = m.enqueue(message(p0, 1))
        #expect(m.bufferedMessages == 3)

        let action = m.revocationStarted([p0])
        #expect(waits(action) && isBuffered(action.delivery))
        #expect(stateName(m) == "awaitingRevocationAck(queued)")
        #expect(m.assignment == [p1])
        #expect(m.userPaused.isEmpty, "a revoked partition's user pause goes with it")
        #expect(m.bufferedMessages == 1)
        #expect(m.buffer.map(describe) == ["revoked [t[0]]", "message t[1]@0"])

        #expect(m.revocationWait(deadlinePassed: false) == .keepWaiting)
        let acknowledged = m.acknowledgeRevocation()
        #expect(!acknowledged, "a buffered .revoked is not the worker's to acknowledge yet")
        #expect(await ask(&m) == ("deliver", "revoked [t[0]]"))
        #expect(stateName(m) == "awaitingRevocationAck(handedOut)")
        #expect(m.revocationWait(deadlinePassed: false) == .keepWaiting)

        // The implicit acknowledgement: asking for the next event.
        #expect(await ask(&m) == ("deliver", "message t[1]@0"))
        #expect(stateName(m) == "running")
        #expect(m.revocationWait(deadlinePassed: false) == .unassign)
    }

    @Test("a revoke hands .revoked to a parked next at once, and the explicit acknowledgement completes it")
    func revocationToAParkedWaiterAndExplicitAcknowledgement() async {
        var m = Machine(capacity: 4)
        _ = m.partitionsAssigned([p0], incremental: true)
        let result = await ask(&m) { m in
            let action = m.revocationStarted([p0])
            #expect(waits(action) && !isBuffered(action.delivery))
            action.delivery.perform()
        }
        #expect(result == ("suspend", "revoked [t[0]]"))
        #expect(stateName(m) == "awaitingRevocationAck(handedOut)")
        #expect(m.buffer.isEmpty)
        let acknowledged = m.acknowledgeRevocation()
        #expect(acknowledged)
        #expect(stateName(m) == "running")
        #expect(m.revocationWait(deadlinePassed: false) == .unassign)
        let again = m.acknowledgeRevocation()
        #expect(!again, "nothing left to acknowledge")
    }

    @Test("the deadline ends a revocation wait; its late .revoked does not acknowledge the next revoke")
    func deadlineEndsTheWaitAndALateEventAcknowledgesNothing() async {
        var m = Machine(capacity: 4)
        _ = m.partitionsAssigned([p0, p1], incremental: true)
        #expect(waits(m.revocationStarted([p0])))
        #expect(m.revocationWait(deadlinePassed: true) == .unassignAfterDeadline)
        #expect(stateName(m) == "running")
        // The worker sees the first .revoked only now, and a second revoke arrives before it asks again.
        #expect(await ask(&m) == ("deliver", "revoked [t[0]]"))
        #expect(waits(m.revocationStarted([p1])))
        #expect(await ask(&m) == ("deliver", "revoked [t[1]]"), "this call acknowledges the first, not the second")
        #expect(m.revocationWait(deadlinePassed: false) == .keepWaiting)
        let acknowledged = m.acknowledgeRevocation()
        #expect(acknowledged)
        #expect(m.revocationWait(deadlinePassed: false) == .unassign)
    }

    @Test("a revoke while closing does not wait: .revoked goes to the parked next or to the head of the buffer")
    func revocationDuringCloseDoesNotWait() async {
        var m = Machine(capacity: 4)
        _ = m.partitionsAssigned([p0, p1], incremental: true)
        _ = m.enqueue(.error(KafkaError(code: .transport, message: "x")))
        #expect(m.beginClosing() == .leaveGroup)
        let buffered = m.revocationStarted([p0])
        #expect(!waits(buffered) && isBuffered(buffered.delivery))
        #expect(m.revocationWait(deadlinePassed: false) == .unassign)
        #expect(await ask(&m) == ("deliver", "revoked [t[0]]"))
        #expect(await ask(&m) == ("deliver", "error"))
        #expect(stateName(m) == "closing")

        let parked = await ask(&m) { m in
            let action = m.revocationStarted([p1])
            #expect(!waits(action) && !isBuffered(action.delivery))
            action.delivery.perform()
        }
        #expect(parked == ("suspend", "revoked [t[1]]"))
        #expect(stateName(m) == "closing")
    }

    @Test("a revoke before any assignment does not wait, and the member still counts as joining")
    func revocationBeforeJoiningDoesNotWait() async {
        var m = Machine(capacity: 4)
        let action = m.revocationStarted([])
        #expect(!waits(action))
        #expect(!m.hasJoined)
        #expect(await ask(&m) == ("deliver", "revoked []"))
    }

    @Test("close while a next and a close are parked: finish resumes the next with nil and wakes the close")
    func closeWhileAWaiterIsParked() async throws {
        let shared = Shared()
        _ = shared.machine.withLock { $0.partitionsAssigned([p0], incremental: true) }
        let reader = Task {
            await withCheckedContinuation { (c: Machine.EventWaiter) in
                if case .suspend = shared.machine.withLock({ $0.next(c, isCancelled: false) }) { return }
                c.resume(returning: .error(KafkaError(code: .state, message: "did not park")))
            }
        }
        let closer = Task {
            await withCheckedContinuation { (c: Machine.CloseWaiter) in
                if shared.machine.withLock({ $0.waitUntilFinished(c) }) == .resumeNow { c.resume() }
            }
        }
        try await eventually("both parked") { shared.machine.withLock { waiters($0) == (next: true, closers: 1) } }
        #expect(shared.machine.withLock { $0.beginClosing() } == .leaveGroup)
        let parked = shared.machine.withLock { waiters($0) }
        #expect(parked.next && parked.closers == 1, "closing keeps them parked")
        shared.machine.withLock { $0.finish() }.perform()
        #expect(describe(await reader.value) == "nil")
        await closer.value
        #expect(shared.machine.withLock { stateName($0) } == "finished")
        if case .wake = shared.machine.withLock({ $0.finish() }) { Issue.record("finishing twice wakes nobody") }
    }

    @Test("after finish, buffered events drain, then next ends and close returns at once")
    func finishedDrainsThenEnds() async {
        var m = Machine(capacity: 4)
        _ = m.partitionsAssigned([p0], incremental: true)
        _ = m.enqueue(message(p0, 0))
        _ = m.beginClosing()
        _ = m.enqueue(.revoked([p0]))
        m.finish().perform()
        #expect(await ask(&m) == ("deliver", "message t[0]@0"))
        #expect(await ask(&m) == ("deliver", "revoked [t[0]]"))
        #expect(await ask(&m) == ("end", "nil"))
        await withCheckedContinuation { (c: Machine.CloseWaiter) in
            #expect(m.waitUntilFinished(c) == .resumeNow)
            c.resume()
        }
    }

    @Test("finish during a revocation wait ends it")
    func finishEndsARevocationWait() {
        var m = Machine(capacity: 4)
        _ = m.partitionsAssigned([p0], incremental: true)
        _ = m.revocationStarted([p0])
        m.finish().perform()
        #expect(stateName(m) == "finished")
        #expect(m.revocationWait(deadlinePassed: false) == .unassign)
    }

    @Test("a cancelled iterator ends: the parked next resumes with nil; a buffered event still comes first")
    func cancellationEndsTheIterator() async {
        var m = Machine(capacity: 4)
        #expect(m.cancelNext() == nil)
        let parked = await ask(&m) { m in m.cancelNext()?.resume(returning: nil) }
        #expect(parked == ("suspend", "nil"))
        #expect(waiters(m) == (next: false, closers: 0))
        #expect(await ask(&m, cancelled: true) == ("end", "nil"))
        _ = m.enqueue(.assigned([]))
        #expect(await ask(&m, cancelled: true) == ("deliver", "assigned []"))
    }

    @Test("a batch takes what is buffered up to its limit and stops after a .revoked")
    func batchesStopAfterARevocation() {
        var m = Machine(capacity: 8)
        _ = m.partitionsAssigned([p0, p1], incremental: true)
        for offset in 0..<3 { _ = m.enqueue(message(p1, Int64(offset))) }
        #expect(m.takeMore(limit: 2).map(describe) == ["message t[1]@0", "message t[1]@1"])
        _ = m.revocationStarted([p0])
        #expect(m.takeMore(limit: 10).map(describe) == ["revoked [t[0]]"])
        #expect(stateName(m) == "awaitingRevocationAck(handedOut)")
        #expect(m.takeMore(limit: 10).map(describe) == ["message t[1]@2"], "taking more does not acknowledge")
        #expect(stateName(m) == "awaitingRevocationAck(handedOut)")
    }

    @Test("backpressure pauses the assignment at capacity and resumes at half drain, leaving user pauses paused")
    func backpressurePausesAtCapacityAndResumesAtHalf() async {
        var m = Machine(capacity: 4)
        _ = m.partitionsAssigned([p0, p1], incremental: true)
        #expect(m.pauseRequested([p1]) == .pause([p1]))
        for offset in 0..<3 { _ = m.enqueue(message(p0, Int64(offset))) }
        #expect(m.applyBackpressure() == .unchanged)
        _ = m.enqueue(message(p0, 3))
        #expect(fetch(m.applyBackpressure()) == ("pause", [p0, p1]))
        #expect(m.fetching == .heldBack)
        #expect(m.applyBackpressure() == .unchanged, "held: nothing more to do")
        #expect(m.partitionsAssigned([p2], incremental: true) == .pause([p2]), "new partitions start held back")

        _ = await ask(&m)
        #expect(m.applyBackpressure() == .unchanged, "3 of 4 buffered: still held")
        _ = await ask(&m)
        #expect(fetch(m.applyBackpressure()) == ("resume", [p0, p2]), "2 of 4: resumed, except the user's pause")
        #expect(m.fetching == .flowing)
    }

    @Test("a user resume while backpressure holds fetching waits for the backpressure resume")
    func userResumeWhileHeldBack() {
        var m = Machine(capacity: 1)
        _ = m.partitionsAssigned([p0], incremental: true)
        _ = m.pauseRequested([p0])
        _ = m.enqueue(message(p0, 0))
        #expect(fetch(m.applyBackpressure()) == ("pause", [p0]))
        #expect(m.resumeRequested([p0]) == .unchanged)
        #expect(m.userPaused.isEmpty)
        #expect(m.takeMore(limit: 1).count == 1)
        #expect(fetch(m.applyBackpressure()) == ("resume", [p0]))
        #expect(m.resumeRequested([p0]) == .resume([p0]), "flowing: a user resume resumes")
    }

    @Test("lag is sampled for assigned partitions only, and not at all once closing")
    func lagFollowsTheAssignment() {
        var m = Machine(capacity: 4)
        _ = m.partitionsAssigned([p0], incremental: true)
        #expect(m.partitionsToSample == [p0])
        m.recordLag([p0: 3, p1: 9])
        #expect(m.lag == [p0: 3])
        _ = m.beginClosing()
        #expect(m.partitionsToSample.isEmpty)
        m.recordLag([p0: 1])
        #expect(m.lag.isEmpty)
    }

    @Test("the consumer's shared state acknowledges explicitly and wakes a parked reader on finish")
    func sharedStateRunsTheActions() async throws {
        var running = Machine(capacity: 4)
        _ = running.partitionsAssigned([p0], incremental: true)
        let state = ConsumerState(machine: running, watchdog: nil)
        #expect(state.revocationStarted([p0]))
        #expect(describe(await state.next()) == "revoked [t[0]]")
        #expect(state.revocationWait(deadlinePassed: false) == .keepWaiting)
        #expect(state.acknowledgeRevocation())
        #expect(state.revocationWait(deadlinePassed: false) == .unassign)

        // Parked or not by the time finish runs, both end the same way.
        let reader = Task { await state.next() }
        let closer = Task { await state.waitUntilFinished() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(state.beginClosing() == .leaveGroup)
        state.finish()
        #expect(describe(await reader.value) == "nil")
        await closer.value
    }
}

/// A machine behind a Mutex that tasks can share, as `ConsumerState` holds it.
private final class Shared: Sendable {
    let machine = Mutex(ConsumerStateMachine(capacity: 4))
}

// MARK: - Helpers

/// `next()` with a real continuation. Returns the action's name and what the caller receives: at once,
/// or, when it parked, whatever `meanwhile` resumes it with (by performing an action).
private func ask(
    _ m: inout ConsumerStateMachine, cancelled: Bool = false,
    meanwhile: (inout ConsumerStateMachine) -> Void = { _ in Issue.record("parked with nothing to resume it") }
) async -> (String, String) {
    var name = ""
    let event = await withCheckedContinuation { (c: ConsumerStateMachine.EventWaiter) in
        switch m.next(c, isCancelled: cancelled) {
        case .deliver(let event):
            name = "deliver"
            c.resume(returning: event)
        case .end:
            name = "end"
            c.resume(returning: nil)
        case .suspend:
            name = "suspend"
            meanwhile(&m)
            // A transition that did not resume it leaves it parked: end it so the test cannot hang.
            m.cancelNext()?.resume(returning: nil)
        }
    }
    return (name, describe(event))
}

private func message(_ tp: TopicPartition, _ offset: Int64) -> KafkaConsumer.Event {
    .message(KafkaMessage(topic: tp.topic, partition: tp.partition, offset: offset, key: nil, value: [], headers: []))
}

private func describe(_ event: KafkaConsumer.Event?) -> String {
    switch event {
    case .message(let m): "message \(m.topicPartition)@\(m.offset)"
    case .assigned(let tps): "assigned \(tps)"
    case .revoked(let tps): "revoked \(tps)"
    case .error: "error"
    case nil: "nil"
    }
}

private func stateName(_ m: ConsumerStateMachine) -> String {
    switch m.state {
    case .joining: "joining"
    case .running: "running"
    case .awaitingRevocationAck(let event, _): "awaitingRevocationAck(\(event))"
    case .closing: "closing"
    case .finished: "finished"
    }
}

private func waiters(_ m: ConsumerStateMachine) -> (next: Bool, closers: Int) {
    switch m.state {
    case .joining(let w), .running(let w), .closing(let w): (w.next != nil, w.closers.count)
    case .awaitingRevocationAck(_, let closers): (false, closers.count)
    case .finished: (false, 0)
    }
}

private func isBuffered(_ delivery: ConsumerStateMachine.Delivery) -> Bool {
    if case .buffered = delivery { return true }
    return false
}

private func waits(_ action: ConsumerStateMachine.RevocationAction) -> Bool {
    if case .awaitAcknowledgement = action { return true }
    return false
}

/// A fetch action as its kind and partition set (the machine builds the lists from sets, in no order).
private func fetch(_ action: ConsumerStateMachine.FetchAction) -> (String, Set<TopicPartition>) {
    switch action {
    case .pause(let tps): ("pause", Set(tps))
    case .resume(let tps): ("resume", Set(tps))
    case .unchanged: ("unchanged", [])
    }
}
