import Foundation
import OwnedThreads
#if canImport(Glibc)
import Glibc
#endif

/// Ends a test process that has run far longer than the suite ever takes, after printing every
/// thread's stack: a hang then fails CI in minutes with the stacks that say where, instead of
/// running it out of its 90 minutes with nothing to read (the thirteenth session's submission).
///
/// Armed by the helpers most suites start with (``RedisServerProcess``, ``ProcessRunner``), and only
/// inside a test bundle: `ksm bench` uses the same helpers and may run for as long as it likes.
package enum TestRunWatchdog {
    /// The whole suite takes 3.5 minutes here; a CI host three times slower stays far below this.
    package static let limit: Duration = .seconds(Int64(ProcessInfo.processInfo.environment["KSM_TEST_WATCHDOG_SECONDS"].flatMap(Int64.init) ?? 1_800))

    package static func arm() { _ = armed }

    private static let armed: Void = {
        let name = ProcessInfo.processInfo.processName
        guard name.hasSuffix(".xctest") || name.contains("PackageTests") else { return }
        let started = ContinuousClock.now
        OwnedThread.start(name: "test-watchdog") {
            while ContinuousClock.now - started < limit { sleep(5) }
            let pid = getpid()
            FileHandle.standardError.write(Data("\nTEST WATCHDOG: this test process has run \(limit); every thread's stack follows, then it exits 1\n".utf8))
            // gdb from Debian's gdb package when present; the exit comes either way.
            let gdb = Process()
            gdb.executableURL = URL(fileURLWithPath: "/usr/bin/gdb")
            gdb.arguments = ["-p", "\(pid)", "-batch", "-ex", "thread apply all bt 30"]
            gdb.standardOutput = FileHandle.standardError
            gdb.standardError = FileHandle.standardError
            if (try? gdb.run()) != nil { gdb.waitForExitBlocking(timeout: .seconds(120)) }
            exit(1)
        }.detach()
    }()
}
