import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension Process {
    /// How the child ended, or nil while it runs (or when it never started). Asked of the kernel
    /// (`waitid` with `WNOWAIT`, which leaves the reaping to Foundation), not only of `isRunning`.
    ///
    /// Why: Foundation learns of an exit when a socket the child inherited closes, and on Linux a child
    /// spawned by another thread at the same moment can inherit that socket too (Foundation closes the
    /// descriptors that exist when it starts spawning, not those opened meanwhile). `isRunning` then
    /// stays true until that other child exits as well: two tests each waiting for the other's server
    /// to die held both cooperative threads for ever.
    package var exitStatus: ProcessExitStatus? {
        // Foundation traps on the termination fields of a process it never launched.
        guard hasLaunched else { return nil }
        // Once Foundation has reaped the child its fields are final, and the pid may belong to
        // another process by now: never ask the kernel about it again.
        if !isRunning { return ProcessExitStatus(status: terminationStatus, signalled: terminationReason == .uncaughtSignal) }
        var info = siginfo_t()
        let rc = waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOHANG | WNOWAIT)
        if rc == 0, info._sifields._sigchld.si_pid == processIdentifier {
            let code = info.si_code
            let status = info._sifields._sigchld.si_status
            return ProcessExitStatus(status: status, signalled: code == CLD_KILLED || code == CLD_DUMPED)
        }
        // Reaped by Foundation between the two looks (ECHILD): its fields are final once isRunning says so.
        return nil
    }

    /// Waits until the child has exited, at most `timeout`; its exit status, or nil on timeout (at
    /// once for a process never launched).
    ///
    /// Why not `waitUntilExit()`: it spins a run loop on the calling thread until Foundation sees the
    /// exit (see ``exitStatus`` for when that is late); on Swift's cooperative pool, two threads on a
    /// two-core host, every test in the process waits with it.
    package func waitForExit(timeout: Duration) async -> ProcessExitStatus? {
        guard hasLaunched else { return nil }
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status = exitStatus { return status }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The same for synchronous callers (`deinit`): blocks the calling thread, at most `timeout`.
    @discardableResult
    package func waitForExitBlocking(timeout: Duration) -> ProcessExitStatus? {
        guard hasLaunched else { return nil }
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status = exitStatus { return status }
            if ContinuousClock.now >= deadline { return nil }
            usleep(2_000)
        }
    }

    /// Running in the kernel's view (``exitStatus`` is nil): true from `run()` until the child exits.
    package var isAlive: Bool { hasLaunched && exitStatus == nil }

    /// False when `run()` never started a child (it threw): there is nothing to ask about or wait for.
    private var hasLaunched: Bool { processIdentifier > 0 }
}
