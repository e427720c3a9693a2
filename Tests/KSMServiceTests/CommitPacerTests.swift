import Synchronization
import Testing
@testable import KSMService

@Suite("Commit pacer")
struct CommitPacerTests {
    final class Commits: Sendable {
        let times = Mutex<[ContinuousClock.Instant]>([])
        func record() { times.withLock { $0.append(.now) } }
        var count: Int { times.withLock { $0.count } }
    }

    @Test("The first request commits at once; requests within the interval merge into one trailing commit at its end")
    func mergesWithinTheInterval() async throws {
        let pacer = CommitPacer(interval: .milliseconds(200))
        let commits = Commits()
        let start = ContinuousClock.now
        for _ in 0..<10 { pacer.request { commits.record() } }
        #expect(commits.count == 1, "the first request commits synchronously")
        // The trailing commit comes at the end of the interval, not before, and only once.
        let deadline = ContinuousClock.now + .seconds(5)
        while commits.count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(300))
        let times = commits.times.withLock { $0 }
        #expect(times.count == 2, "ten requests in one interval: one commit at once and one trailing")
        if times.count == 2 { #expect(times[1] - start >= .milliseconds(190)) }
    }

    @Test("A request after a quiet interval commits at once again; none is dropped")
    func commitsAgainAfterTheInterval() async throws {
        let pacer = CommitPacer(interval: .milliseconds(50))
        let commits = Commits()
        pacer.request { commits.record() }
        try await Task.sleep(for: .milliseconds(120))
        pacer.request { commits.record() }
        #expect(commits.count == 2, "a request more than an interval after the last commit is not delayed")
        pacer.request { commits.record() }
        let deadline = ContinuousClock.now + .seconds(5)
        while commits.count < 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(commits.count == 3, "the request inside the interval is committed by a trailing commit")
    }
}
