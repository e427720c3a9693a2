import Foundation
import KSMTestSupport
import OwnedThreads
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The process helpers tests use to run commands: bounded, never blocking a cooperative thread, and
/// right about an exit even when Foundation has not noticed it yet.
@Suite struct ProcessRunnerTests {
    /// A shell that leaves a `sleep` behind and exits. The sleep inherits every descriptor the shell
    /// had: its output pipe and Foundation's exit-notification socket, as a child spawned by another
    /// thread at the same moment can (a CI stall it caused).
    static let leaveASleeperBehind = ["-c", "sleep 600 & echo $!; exit 3"]

    @Test("an exit is seen at once although a descendant holds Foundation's notification socket")
    func exitSeenWhileADescendantHoldsTheSocket() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = Self.leaveASleeperBehind
        process.standardOutput = FileHandle.nullDevice
        try SpawnGate.holding { try process.run() }
        let started = ContinuousClock.now
        let exit = await process.waitForExit(timeout: .seconds(300))
        #expect(exit == ProcessExitStatus(status: 3, signalled: false))
        // Before the sleep's 600 s: the lag this guards against lasts until the sleeper ends. The
        // suite's crowded first minute on two cores has held this task up for a minute, so the
        // bound is half the sleep, far from both.
        #expect(ContinuousClock.now - started < .seconds(300))
        // What waitUntilExit() waits for is still false: the sleep holds the socket.
        #expect(process.isRunning, "Foundation saw the exit; the test no longer shows the lag it guards against")
        Glibc.kill(-process.processIdentifier, SIGKILL)  // the shell's process group: the sleep
    }

    @Test("a run returns what the command printed, its status, and gives up on a pipe a descendant keeps open")
    func runReturnsOutputAndStatusDespiteAnInheritedPipe() async throws {
        let started = ContinuousClock.now
        let output = try await ProcessRunner.run(URL(fileURLWithPath: "/bin/sh"), Self.leaveASleeperBehind, timeout: .seconds(400))
        // Half the sleeper's 600 s: a runner that waited for the inherited pipe would wait all of it.
        #expect(ContinuousClock.now - started < .seconds(300))
        #expect(output.status == 3 && !output.signalled)
        let sleeper = try #require(Int32(output.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)))
        Glibc.kill(sleeper, SIGKILL)
    }

    @Test("both pipes are drained at once: 1 MB on standard error does not block a command that writes standard output last")
    func bothPipesDrainedAtOnce() async throws {
        let script = "head -c 1048576 /dev/zero >&2; echo done"
        let output = try await ProcessRunner.run(URL(fileURLWithPath: "/bin/sh"), ["-c", script], timeout: .seconds(30))
        #expect(output.succeeded)
        #expect(output.stderr.count == 1_048_576)
        #expect(output.stdoutText == "done\n")
    }

    @Test("standard input is written while the output is read: 1 MB through cat")
    func inputAndOutputAtOnce() async throws {
        let input = (0..<1_048_576).map { UInt8(truncatingIfNeeded: $0) }
        let output = try await ProcessRunner.run(URL(fileURLWithPath: "/bin/cat"), [], input: input, timeout: .seconds(30))
        #expect(output.succeeded)
        #expect(output.stdout == input)
    }

    @Test("a command that outlives its timeout is killed and reported with what it printed")
    func timeoutKillsAndReports() async throws {
        let started = ContinuousClock.now
        await #expect(throws: ProcessTimedOut.self) {
            _ = try await ProcessRunner.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "echo waiting; exec sleep 600"], timeout: .seconds(1))
        }
        // Half the 600 s the command would take; room for a loaded host to hold this task up after
        // the kill (a minute seen in the suite's crowded first minute).
        #expect(ContinuousClock.now - started < .seconds(300))
        do {
            _ = try await ProcessRunner.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "echo waiting; sleep 600; echo never"], timeout: .seconds(2))
            Issue.record("a command sleeping 600 s finished within 2 s")
        } catch let error as ProcessTimedOut {
            // The shell and its sleep (the whole group) are gone, and what it printed is reported.
            #expect(error.output.stdoutText == "waiting\n")
            #expect(error.description.contains("did not finish within"))
        }
    }
}
