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
        try await Task.sleep(for: .milliseconds(400))
        let times = commits.withLock { $0 }
        #expect(times.count == 2, "\(times.count) commits")
        if times.count == 2 { #expect(times[1] - start >= .milliseconds(100)) }
        // Quiet for longer than the interval: the next request commits at once again.
        pacer.request { commits.withLock { $0.append(.now) } }
        #expect(commits.withLock { $0.count } == 3)
    }
}
