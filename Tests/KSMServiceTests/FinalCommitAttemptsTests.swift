import Testing

@testable import KSMService
@testable import Kafka

/// The final commit's attempts: bounded each, retried while time remains, given up on at the end.
@Suite("Final commit attempts")
struct FinalCommitAttemptsTests {
    let start = ContinuousClock.now
    static let rebalancing = KafkaError(code: .init(rawValue: 27), message: "rebalance in progress", kind: .commitFailed)

    @Test("an attempt takes at most 1.5 s, and at least 200 ms however late it starts")
    func attemptsAreBounded() {
        var attempts = FinalCommitAttempts(end: start + .seconds(10))
        #expect(attempts.begin(now: start) == .milliseconds(1500))
        #expect(attempts.begin(now: start + .milliseconds(9_900)) == .milliseconds(200))
        #expect(attempts.attempts == 2)
    }

    @Test("a refused commit is retried after a short wait; one that timed out at once")
    func retriesWhileTimeRemains() {
        let attempts = FinalCommitAttempts(end: start + .seconds(5))
        #expect(attempts.next(after: .failed(Self.rebalancing), now: start) == .retry(after: .milliseconds(100)))
        #expect(attempts.next(after: .timedOut, now: start) == .retry(after: .zero))
        #expect(attempts.next(after: .committed, now: start) == .done)
    }

    @Test("within 200 ms of the end, or once the shutdown is cancelled, a failure is final")
    func givesUpAtTheEnd() {
        let end = start + .seconds(5)
        let attempts = FinalCommitAttempts(end: end)
        #expect(attempts.next(after: .failed(Self.rebalancing), now: end - .milliseconds(100)) == .giveUp)
        #expect(attempts.next(after: .timedOut, now: end) == .giveUp)
        #expect(attempts.next(after: .timedOut, now: start, cancelled: true) == .giveUp)
        #expect(attempts.next(after: .committed, now: end + .seconds(1)) == .done, "a commit that made it counts, late or not")
    }
}
