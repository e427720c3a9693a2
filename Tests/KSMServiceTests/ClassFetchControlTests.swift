import Kafka
import Synchronization
import Testing

@testable import KSMService

/// Which request topics a worker fetches (``ClassFetchControl``): room in memory goes to continuity
/// first, new sessions and prefetch keep a floor, and the single requests topic pauses and resumes on the in-flight limit alone.
@Suite("Class fetch control")
struct ClassFetchControlTests {
    static let all: [ClassFetchControl.FetchClass] = [.mixed, .priority(.continuity), .priority(.new), .priority(.prefetch)]

    @Test("the single requests topic pauses at the in-flight limit and resumes at half")
    func requestsTopicAsBefore() {
        var control = ClassFetchControl(maximumInFlight: 100, round: 8)
        #expect(control.decide(inFlight: 99, queued: [:], classes: [.mixed]).isEmpty)
        #expect(control.decide(inFlight: 100, queued: [:], classes: [.mixed]).pause == [.mixed])
        #expect(control.decide(inFlight: 51, queued: [:], classes: [.mixed]).isEmpty)
        #expect(control.decide(inFlight: 50, queued: [:], classes: [.mixed]).resume == [.mixed])
    }

    @Test("new sessions pause at half the room while continuity keeps fetching up to the limit")
    func continuityKeepsTheUpperHalf() {
        var control = ClassFetchControl(maximumInFlight: 1_000, round: 16)
        let change = control.decide(inFlight: 500, queued: [.new: 400], classes: Self.all)
        #expect(change.pause == [.priority(.new)])
        #expect(!control.paused.contains(.priority(.continuity)))
        // Continuity fills the rest; only the limit stops it.
        #expect(control.decide(inFlight: 999, queued: [.new: 400, .continuity: 499], classes: Self.all).isEmpty)
        #expect(
            control.decide(inFlight: 1_000, queued: [.new: 400, .continuity: 500], classes: Self.all).pause == [
                .mixed, .priority(.continuity), .priority(.prefetch),
            ])
    }

    @Test("new sessions keep a reserve in memory even while continuity holds the room: the floor never runs dry")
    func newSessionFloor() {
        var control = ClassFetchControl(maximumInFlight: 1_000, round: 16)
        _ = control.decide(inFlight: 600, queued: [.new: 100, .continuity: 400], classes: Self.all)
        #expect(control.paused.contains(.priority(.new)))
        // Continuity still holds most of the room, but the queued joins ran down to half the reserve.
        let change = control.decide(inFlight: 700, queued: [.new: control.newReserve / 2, .continuity: 600], classes: Self.all)
        #expect(change.resume.contains(.priority(.new)))
    }

    @Test("prefetch fetches only with spare capacity, and keeps a small reserve for its floor")
    func prefetchOnlyWithSpareCapacity() {
        var control = ClassFetchControl(maximumInFlight: 1_000, round: 64)
        #expect(control.decide(inFlight: 10, queued: [.prefetch: 10], classes: Self.all).isEmpty)
        // A continuity backlog of more than one round: no spare capacity.
        let busy = control.decide(inFlight: 200, queued: [.prefetch: control.prefetchReserve, .continuity: 100], classes: Self.all)
        #expect(busy.pause == [.priority(.prefetch)])
        // The backlog drains; prefetch comes back once the queue is almost empty and in flight is low.
        #expect(control.decide(inFlight: 150, queued: [.prefetch: control.prefetchReserve, .continuity: 40], classes: Self.all).isEmpty)
        #expect(
            control.decide(inFlight: 100, queued: [.prefetch: control.prefetchReserve, .continuity: 20], classes: Self.all).resume == [.priority(.prefetch)])
    }
}

extension ClassFetchControl {
    /// Decides and records every switch as made: a consumer that takes every call.
    mutating func decide(inFlight: Int, queued: [LicenseJob.Priority: Int], classes: [FetchClass]) -> Change {
        let change = update(inFlight: inFlight, queued: queued, classes: classes)
        record(.succeeded(change))
        return change
    }
}
