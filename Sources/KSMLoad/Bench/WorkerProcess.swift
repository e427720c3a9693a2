import Foundation
import KSMOperations
import KSMService
import KSMTestSupport

/// A `ksm serve` child process with an admin port of its own, its output in a log file. Progress
/// comes from its `/status` (``WorkerStatus``), never from the log's text.
package final class WorkerProcess: @unchecked Sendable {
    // @unchecked: the Process is touched by the owning benchmark only.
    package let process: Process
    package let log: URL
    package let adminPort: Int

    private init(process: Process, log: URL, adminPort: Int) {
        self.process = process
        self.log = log
        self.adminPort = adminPort
    }

    /// Starts `executable` with `arguments` and `--admin-port` on a free loopback port.
    package static func start(executable: URL, log: URL, arguments: [String]) throws -> WorkerProcess {
        let port = try RedisServerProcess.freeLoopbackPort()
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments + ["--admin-port", "\(port)"]
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return WorkerProcess(process: process, log: log, adminPort: port)
    }

    /// The worker's `/status`; nil while the admin port does not answer.
    package func status() async -> WorkerStatus? {
        await WorkerStatus.fetch(port: adminPort)
    }

    /// Waits until every worker owns partitions and no assignment changed for 1.5 s (cooperative
    /// rebalancing moves partitions in steps).
    package static func waitUntilSettled(_ workers: [WorkerProcess], timeout: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + timeout
        var last = -1
        var since = ContinuousClock.now
        while ContinuousClock.now < deadline {
            if let dead = workers.first(where: { !$0.process.isRunning }) {
                throw StormRun.Failure("ksm serve exited early; see \(dead.log.path): \((try? String(contentsOf: dead.log, encoding: .utf8))?.suffix(600) ?? "")")
            }
            var statuses: [WorkerStatus] = []
            for worker in workers { if let status = await worker.status() { statuses.append(status) } }
            let changes = statuses.reduce(0) { $0 + $1.partitionChanges }
            if statuses.count < workers.count || changes != last {
                last = statuses.count < workers.count ? -1 : changes
                since = .now
            } else if statuses.allSatisfy({ $0.assignedPartitions > 0 }), ContinuousClock.now - since > .milliseconds(1_500) {
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw StormRun.Failure("workers did not settle within \(timeout)")
    }

    package func terminate() {
        if process.isRunning { process.terminate() }
    }

    package func waitForExit(timeout: Duration = .seconds(30)) async {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
