import Foundation
import TestRunWatchdog
import Testing

/// The watchdog that turns a hung test run into a failure with every thread's stack.
@Suite struct TestRunWatchdogTests {
    @Test("the watchdog is armed in the test bundle before any test runs, for 30 minutes unless set")
    func armedInTheTestBundle() {
        let configured = ProcessInfo.processInfo.environment["KSM_TEST_WATCHDOG_SECONDS"].flatMap(UInt32.init) ?? 1_800
        #expect(ksm_test_watchdog_seconds() == configured)
    }
}
