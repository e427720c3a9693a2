import Foundation
import TestRunWatchdog
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The test process's own limits, set by a constructor before any test runs: a busy moment of the
/// parallel suite must not end the process (librdkafka's mock aborts when it cannot open a socket).
@Suite struct TestProcessLimitsTests {
    @Test("the test bundle's constructor lifted the descriptor limit to the hard one (at most 65,536) and ignores SIGPIPE")
    func descriptorsLiftedAndBrokenPipesIgnored() throws {
        // Other parts ignore SIGPIPE too, once they run: the flag says the constructor did, first.
        #expect(ksm_test_process_limits_set() == 1)
        var limit = rlimit()
        #expect(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let soft = ksm_test_open_files_limit()
        if limit.rlim_max == rlim_t.max {
            #expect(soft == -1 || soft >= 65_536)
        } else {
            #expect(soft >= min(Int(limit.rlim_max), 65_536))
        }

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
