import ChildProcesses
import Foundation
import OwnedThreads

/// Where a pinned storm runs: the workers on CPUs of their own, and everything else (the bench's
/// client, the in-process mock Kafka cluster, redis-server) on the rest. The in-process baseline runs
/// on the workers' CPUs, so the ideal is what those CPUs do in process, and the harness, which runs
/// on other machines in production, takes no share of them.
///
/// Why: unpinned on a two-core host, Redis, the broker and the client cost about 40 µs per job beside
/// 225 µs of RSA, a sixth of the ideal that no worker can win back (docs/performance.md).
///
/// Pinning goes through util-linux's `taskset`: Swift's Glibc module does not expose
/// `sched_setaffinity`, and `taskset -c` sets a worker's mask before its first instruction, so every
/// thread it starts inherits it.
package struct CPUPinning: Sendable, Equatable {
    /// The workers' CPUs, ascending.
    package let workerCPUs: [Int]
    /// Every other CPU this process may use, ascending: the harness's.
    package let harnessCPUs: [Int]

    /// A CPU list that cannot be honoured, and why.
    package struct Invalid: Error, CustomStringConvertible {
        package let description: String
    }

    /// A move that did not happen (taskset failed, or a thread stayed where it was).
    package struct MoveFailed: Error, CustomStringConvertible {
        package let description: String
    }

    /// The workers' CPUs from `list`, checked against the CPUs this process may run on.
    package init(workerCPUs list: String) throws(Invalid) {
        guard let allowed = CPUAffinity.allowedCPUs() else {
            throw Invalid(description: "--worker-cpus: cannot read this process's CPUs from /proc/self/status")
        }
        try self.init(workerCPUs: list, allowed: allowed)
    }

    /// - Parameters:
    ///   - list: the workers' CPUs as `taskset -c` takes them (`0`, `0,2`, `0-1`).
    ///   - allowed: the CPUs this process may run on (``CPUAffinity/allowedCPUs(of:task:)``).
    package init(workerCPUs list: String, allowed: [Int]) throws(Invalid) {
        let workers: [Int]
        do throws(CPUAffinity.InvalidList) { workers = try CPUAffinity.parseList(list) } catch { throw Invalid(description: error.description) }
        let outside = workers.filter { !allowed.contains($0) }
        guard outside.isEmpty else {
            throw Invalid(
                description: "--worker-cpus \(list): CPU \(CPUAffinity.listText(outside)) is not one this process may use (\(CPUAffinity.listText(allowed)))")
        }
        let rest = allowed.filter { !workers.contains($0) }
        guard !rest.isEmpty else {
            throw Invalid(
                description: "--worker-cpus \(list) leaves no CPU for Redis, the broker and the client (this process may use \(CPUAffinity.listText(allowed)))")
        }
        (workerCPUs, harnessCPUs) = (workers, rest)
    }

    /// Moves every thread of this process onto the harness's CPUs, for the rest of its life unless
    /// moved again, and checks that each one is there (a thread started during the move inherits its
    /// creator's old mask, so a straggler is moved again). Children started afterwards inherit the
    /// harness's CPUs.
    package func pinBench() async throws {
        let cpus = harnessCPUs
        let pid = "\(ProcessInfo.processInfo.processIdentifier)"
        var failure = ""
        for _ in 0..<3 {
            // taskset fails when a thread it listed ends before it is moved; what counts is where
            // the threads that remain are, checked below.
            let moved = try await ProcessRunner.run(Self.taskset, ["-a", "-p", "-c", CPUAffinity.listText(cpus), pid], timeout: .seconds(30))
            if !moved.succeeded { failure = ": taskset -a -p -c \(CPUAffinity.listText(cpus)) \(pid): \(moved.stderrText)" }
            let tasks = try Self.threads()
            // A thread that ended since the listing has no status left to read: it needs no move.
            if tasks.allSatisfy({ CPUAffinity.allowedCPUs(task: $0).map { $0 == cpus } ?? true }) { return }
        }
        throw MoveFailed(description: "threads of this process stayed off CPUs \(CPUAffinity.listText(cpus)) after three moves\(failure)")
    }

    /// This process's thread IDs.
    private static func threads() throws -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        } catch {
            throw MoveFailed(description: "cannot list this process's threads in /proc/self/task: \(error)")
        }
    }

    /// Moves this process's threads whose name starts with `prefix` onto the workers' CPUs and leaves
    /// the rest where they are: the in-process baseline's crypto threads get the workers' CPUs to
    /// themselves, as a worker's do, while the bench's broker and client threads stay on the harness's.
    /// Returns how many threads moved; none found is an error (the baseline would run unpinned).
    @discardableResult
    package func pinThreads(named prefix: String) async throws -> Int {
        let pid = ProcessInfo.processInfo.processIdentifier
        let named = try Self.threads().filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.hasPrefix(prefix) ?? false
        }
        guard !named.isEmpty else { throw MoveFailed(description: "process \(pid) has no thread named \(prefix)* to pin") }
        for task in named {
            let moved = try await ProcessRunner.run(Self.taskset, ["-p", "-c", CPUAffinity.listText(workerCPUs), task], timeout: .seconds(30))
            // A thread that ended meanwhile has no status left: nothing to move.
            let now = CPUAffinity.allowedCPUs(task: task)
            guard now == nil || (moved.succeeded && now == workerCPUs) else {
                throw MoveFailed(description: "thread \(task) (\(prefix)*) stayed off CPUs \(CPUAffinity.listText(workerCPUs)): \(moved.stderrText)")
            }
        }
        return named.count
    }

    /// The command that starts a worker (`arguments`: `serve` and its flags) on the workers' CPUs,
    /// with one crypto thread per CPU it has (`ksm serve` counts the host's). The crypto-thread flag
    /// comes right after the subcommand, so one among `arguments` wins.
    package func workerCommand(_ executable: URL, _ arguments: [String]) -> (executable: URL, arguments: [String]) {
        let threads = ["--crypto-threads", "\(workerCPUs.count)"]
        return (Self.taskset, ["-c", CPUAffinity.listText(workerCPUs), executable.path] + arguments.prefix(1) + threads + arguments.dropFirst())
    }

    /// Checks that a started worker runs on the workers' CPUs, as measured from its `/proc` status.
    package func verifyWorker(_ pid: Int32) throws(MoveFailed) {
        let seen = CPUAffinity.allowedCPUs(of: "\(pid)")
        guard seen == workerCPUs else {
            throw MoveFailed(description: "worker \(pid) runs on CPUs \(seen.map(CPUAffinity.listText) ?? "unknown"), not \(CPUAffinity.listText(workerCPUs))")
        }
    }

    /// util-linux's `taskset`, which every Debian system has.
    package static let taskset = URL(fileURLWithPath: "/usr/bin/taskset")
}
