import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestRunWatchdog

/// The watchdog that turns a hung test run into a failure with every thread's stack.
@Suite struct TestRunWatchdogTests {
    @Test("the watchdog is armed in the test bundle before any test runs, for 30 minutes unless set")
    func armedInTheTestBundle() {
        let configured = ProcessInfo.processInfo.environment["KSM_TEST_WATCHDOG_SECONDS"].flatMap(UInt32.init) ?? 1_800
        #expect(ksm_test_watchdog_seconds() == configured)
    }
}

/// The test process's own limits, set before any test runs: a busy moment of the parallel suite must
/// not end the process (librdkafka's mock aborts when it cannot open a socket).
@Suite struct TestProcessLimitsTests {
    @Test("the test process may open descriptors up to its hard limit (at most 65,536), and a broken pipe is an error, not a signal")
    func descriptorsLiftedAndBrokenPipesIgnored() throws {
        var limit = rlimit()
        #expect(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let expected = limit.rlim_max == rlim_t.max ? 65_536 : min(Int(limit.rlim_max), 65_536)
        #expect(ksm_test_open_files_limit() >= expected)

        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        let byte: [UInt8] = [1]
        let written = write(ends[1], byte, 1)
        let error = errno
        close(ends[1])
        #expect(written == -1 && error == EPIPE)
    }
}
