import Kafka
import Testing

@testable import KSMService

@Suite("Offset tracker")
struct OffsetTrackerTests {
    let p0 = TopicPartition(topic: "jobs", partition: 0)
    let p1 = TopicPartition(topic: "jobs", partition: 1)

    @Test("an offset is stored only once every older message of its partition is finished")
    func storesContiguousPrefixOnly() {
        var tracker = OffsetTracker()
        for offset in 10..<15 { tracker.received(p0, offset: Int64(offset)) }
        tracker.received(p1, offset: 0)
        #expect(tracker.inFlightCount == 6)
        #expect(tracker.finished(p0, offset: 12) == nil)
        #expect(tracker.finished(p0, offset: 11) == nil)
        #expect(tracker.finished(p0, offset: 10) == 12)
        #expect(tracker.finished(p1, offset: 0) == 0)
        #expect(tracker.finished(p0, offset: 14) == nil)
        #expect(tracker.inFlightCount == 1)
        #expect(tracker.finished(p0, offset: 13) == 14)
        #expect(tracker.inFlightCount == 0)
    }

    @Test("a repeated, unknown or revoked offset changes nothing")
    func ignoresUnknownOffsets() {
        var tracker = OffsetTracker()
        tracker.received(p0, offset: 1)
        tracker.received(p0, offset: 2)
        #expect(tracker.finished(p0, offset: 7) == nil)
        #expect(tracker.finished(p1, offset: 1) == nil)
        #expect(tracker.finished(p0, offset: 2) == nil)
        #expect(tracker.finished(p0, offset: 2) == nil)
        #expect(tracker.inFlightCount == 1)
        tracker.revoke([p0])
        #expect(tracker.inFlightCount == 0)
        #expect(tracker.finished(p0, offset: 1) == nil)
    }

    @Test("finishing 20,000 offsets in random order stores exactly what a naive model stores")
    func matchesNaiveModel() {
        var tracker = OffsetTracker()
        var generator = SystemRandomNumberGenerator()
        let offsets = (0..<Int64(20_000)).map { $0 }
        for offset in offsets { tracker.received(p0, offset: offset) }
        var unfinished = Set(offsets)
        var stored: Int64 = -1
        var lowest: Int64 = 0
        for offset in offsets.shuffled(using: &generator) {
            unfinished.remove(offset)
            while lowest < 20_000, !unfinished.contains(lowest) { lowest += 1 }
            let expected = lowest - 1
            let got = tracker.finished(p0, offset: offset)
            if expected > stored {
                #expect(got == expected)
                stored = expected
            } else {
                #expect(got == nil)
            }
        }
        #expect(stored == 19_999)
        #expect(tracker.inFlightCount == 0)
    }
}
