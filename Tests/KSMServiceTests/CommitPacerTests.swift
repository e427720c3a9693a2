import Synchronization
import Testing
@testable import KSMService

/// Offsets are committed soon after they are stored, never more often than the interval, and a
/// request inside the interval is merged into one trailing commit, never dropped.
@Suite struct CommitPacerTests {
    @Test("the first request commits at once; a burst inside the interval makes one trailing commit")
    func leadingThenTrailing() async throws {
        let pacer = CommitPacer(interval: .milliseconds(100))
        let commits = Mutex<[ContinuousClock.Instant]>([])
        let start = ContinuousClock.now
        for _ in 0..<50 { pacer.request { commits.withLock { $0.append(.now) } } }
        #expect(commits.withLock { $0.count } == 1, "the leading commit runs in the caller")
        // The trailing commit runs on a task: waited for, since a loaded test host may start it late.
        let deadline = ContinuousClock.now + .seconds(10)
        while commits.withLock({ $0.count }) < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(150))
        let times = commits.withLock { $0 }
        #expect(times.count == 2, "\(times.count) commits: the burst is merged into one trailing commit")
        if times.count == 2 { #expect(times[1] - start >= .milliseconds(100)) }
        // Quiet for longer than the interval after the trailing commit: the next one runs at once.
        pacer.request { commits.withLock { $0.append(.now) } }
        #expect(commits.withLock { $0.count } == 3)
    }
}
