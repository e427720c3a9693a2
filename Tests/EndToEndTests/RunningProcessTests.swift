import Foundation
import KSMLoad
import Testing

/// `RunningProcess` when its spawn fails: `deinit` runs after the failed init and must neither trap
/// (Foundation's fields of a process never launched) nor wait for an exit that cannot come.
@Suite(.timeLimit(.minutes(1))) struct RunningProcessTests {
    @Test("a spawn that fails throws, and the half-made process is dropped without a trap or a wait")
    func failedSpawnThrowsAndIsDroppedAtOnce() {
        let started = ContinuousClock.now
        #expect(throws: (any Error).self) {
            _ = try RunningProcess("missing", executable: URL(fileURLWithPath: "/nonexistent/ksm-missing"), [])
        }
        // A kill that waited for this exit would take its full 10 s bound.
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}
