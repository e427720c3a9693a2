import ChildProcesses
import Foundation
import OwnedThreads

#if canImport(Glibc)
    import Glibc
#endif

/// A long-running child process (`ksm broker`, `ksm serve`, `ksm loadgen`) started by a test or a
/// benchmark; killed (SIGKILL unless stopped before) when its owner drops it.
///
/// Standard output is collected line by line (a broker prints its bootstrap servers there). Standard
/// error is kept in memory, its last 100-200 kB, or written to a file for a benchmark that should not
/// spend its own CPU reading a worker's logs. Progress of a worker comes from its admin port
/// (``status()``), never from the text of its logs.
///
/// Foundation's `Process`, not swift-subprocess: the child runs while its owner signals it
/// (SIGTERM, SIGKILL), writes to its input and reads its output, and is reaped from `deinit`;
/// swift-subprocess ties a child's life to an async closure's scope, and spawns where
/// ``SpawnGate`` cannot be held (`ProcessRunner` in `ChildProcesses` has the measurement).
package final class RunningProcess: @unchecked Sendable {
    // @unchecked: the collected output is guarded by `lock`; the Process is touched by the owner only.
    package let process = Process()
    package let name: String
    /// The admin port of a `ksm serve` started with one (``status()``).
    package var adminPort: Int?
    private let lock = NSLock()
    private var stdoutLines: [String] = []
    private var stderrText = ""
    private var partialLine = ""
    /// Standard input, when started with `controlInput: true` (e.g. `ksm broker`'s control channel).
    private let input: Pipe?
    /// Where standard error goes when not kept in memory.
    package let logFile: URL?

    /// - Parameters:
    ///   - controlInput: a pipe on standard input that ``send(line:)`` writes to; otherwise /dev/null.
    ///   - logFile: standard output and error both go to this file (created or truncated) instead of
    ///     memory; ``lines`` then stays empty and ``stderr`` reads the file's end.
    package init(
        _ name: String, executable: URL, _ arguments: [String], environment: [String: String] = [:], currentDirectory: URL? = nil,
        controlInput: Bool = false, logFile: URL? = nil
    ) throws {
        self.name = name
        self.logFile = logFile
        process.executableURL = executable
        process.arguments = arguments
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        input = controlInput ? Pipe() : nil
        process.standardInput = input ?? FileHandle.nullDevice
        if let logFile {
            FileManager.default.createFile(atPath: logFile.path, contents: nil)
            let handle = try FileHandle(forWritingTo: logFile)
            process.standardOutput = handle
            process.standardError = handle
        } else {
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            // At the end of the pipe the handler is removed: Foundation's read source stays readable
            // there, and a handler left in place spins a core until the object goes away.
            out.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                if data.isEmpty {
                    handle.readabilityHandler = nil
                    return
                }
                self?.collect(stdout: String(decoding: data, as: UTF8.self))
            }
            err.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                if data.isEmpty {
                    handle.readabilityHandler = nil
                    return
                }
                self?.collect(stderr: String(decoding: data, as: UTF8.self))
            }
        }
        try SpawnGate.holding { try process.run() }
    }

    deinit { kill() }

    private func collect(stdout text: String) {
        lock.lock()
        defer { lock.unlock() }
        partialLine += text
        while let newline = partialLine.firstIndex(of: "\n") {
            stdoutLines.append(String(partialLine[..<newline]))
            partialLine = String(partialLine[partialLine.index(after: newline)...])
        }
    }

    private func collect(stderr text: String) {
        lock.lock()
        defer { lock.unlock() }
        stderrText += text
        if stderrText.count > 200_000 { stderrText.removeFirst(100_000) }
    }

    /// The complete lines written to standard output so far.
    package var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return stdoutLines
    }

    /// Standard error so far (the log file's end when started with one).
    package var stderr: String {
        if let logFile { return String((try? String(contentsOf: logFile, encoding: .utf8))?.suffix(200_000) ?? "") }
        lock.lock()
        defer { lock.unlock() }
        return stderrText
    }

    /// Waits for the first stdout line, e.g. `ksm broker`'s bootstrap servers.
    package func firstLine(timeout: Duration = .seconds(20)) async throws(ProcessFailure) -> String {
        try await waitForLine(timeout: timeout) { _ in true }
    }

    /// Writes one line to the process's standard input (needs `controlInput: true`).
    package func send(line: String) throws {
        guard let input else { throw ProcessFailure(description: "\(name) has no control input") }
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Waits until a stdout line at index `from` or later satisfies `matches`; returns it. For output
    /// made for machines (a broker's address, a command's report), not for log text.
    package func waitForLine(from: Int = 0, timeout: Duration = .seconds(20), _ matches: (String) -> Bool) async throws(ProcessFailure) -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let line = lines.dropFirst(from).first(where: matches) { return line }
            guard isRunning, ContinuousClock.now < deadline else { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        throw ProcessFailure(description: "\(name) printed no matching line; stdout: \(lines.suffix(5)) stderr:\n\(stderr.suffix(2000))")
    }

    /// SIGKILL: no goodbye, as a crashed or OOM-killed worker.
    package func kill() {
        if isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        // Bounded (``Process/waitForExitBlocking(timeout:)``): a SIGKILLed child is gone within
        // milliseconds; a missed exit must not hold the caller's thread for ever.
        process.waitForExitBlocking(timeout: .seconds(10))
    }

    /// True until the child exits, in the kernel's view (``Process/exitStatus``): Foundation's
    /// `isRunning` can lag behind an exit for as long as another child holds a descriptor of it.
    package var isRunning: Bool { process.isAlive }

    /// How the child ended; nil while it runs.
    package var exitStatus: ProcessExitStatus? { process.exitStatus }

    /// SIGTERM, then waits for a graceful exit (SIGKILL after `timeout`); returns the exit status.
    @discardableResult
    package func terminate(timeout: Duration = .seconds(30)) async -> Int32 {
        if isRunning { Glibc.kill(process.processIdentifier, SIGTERM) }
        if let exit = await process.waitForExit(timeout: timeout) { return exit.status }
        kill()
        return exitStatus?.status ?? -1
    }
}
