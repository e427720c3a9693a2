import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A long-running `ksm` process (broker, serve) started by a test: its output lines are collected,
/// and it is killed (SIGKILL unless stopped before) when the test drops it.
final class RunningProcess: @unchecked Sendable {
    // @unchecked: `lines` is guarded by `lock`; the Process is touched by the owning test only.
    let process = Process()
    private let lock = NSLock()
    private var stdoutLines: [String] = []
    private var stderrText = ""
    private var partialLine = ""
    let name: String
    /// The admin port of a `ksm serve` started with one (``status()``).
    var adminPort: Int?
    /// Standard input, when started with `controlInput: true` (e.g. `ksm broker`'s control channel).
    private let input: Pipe?

    /// - Parameter controlInput: give the process a pipe on standard input that ``send(line:)`` writes
    ///   to; otherwise standard input is /dev/null.
    init(_ name: String, _ arguments: [String], environment: [String: String] = [:], controlInput: Bool = false) throws {
        self.name = name
        process.executableURL = KSMBinary.url
        process.arguments = arguments
        process.currentDirectoryURL = KSMBinary.packageRoot
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        input = controlInput ? Pipe() : nil
        process.standardInput = input ?? FileHandle.nullDevice
        out.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            guard let self, !text.isEmpty else { return }
            self.lock.lock()
            self.partialLine += text
            while let newline = self.partialLine.firstIndex(of: "\n") {
                self.stdoutLines.append(String(self.partialLine[..<newline]))
                self.partialLine = String(self.partialLine[self.partialLine.index(after: newline)...])
            }
            self.lock.unlock()
        }
        err.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            guard let self, !text.isEmpty else { return }
            self.lock.lock()
            self.stderrText += text
            if self.stderrText.count > 200_000 { self.stderrText.removeFirst(100_000) }
            self.lock.unlock()
        }
        try process.run()
    }

    deinit { kill() }

    var lines: [String] { lock.lock(); defer { lock.unlock() }; return stdoutLines }
    var stderr: String { lock.lock(); defer { lock.unlock() }; return stderrText }

    /// Waits for the first stdout line, e.g. `ksm broker`'s bootstrap servers.
    func firstLine(timeout: Duration = .seconds(20)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let line = lines.first { return line }
            guard process.isRunning, ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ProcessFailure(description: "\(name) printed no line; stderr:\n\(stderr.suffix(2000))")
    }

    /// Writes one line to the process's standard input (needs `controlInput: true`).
    func send(line: String) throws {
        guard let input else { throw ProcessFailure(description: "\(name) has no control input") }
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Waits until a stdout line at index `from` or later satisfies `matches`; returns it.
    func waitForLine(from: Int = 0, timeout: Duration = .seconds(20), _ matches: (String) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let line = lines.dropFirst(from).first(where: matches) { return line }
            guard process.isRunning, ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ProcessFailure(description: "\(name) printed no matching line; stdout: \(lines.suffix(5)) stderr:\n\(stderr.suffix(2000))")
    }

    /// SIGKILL: no goodbye, as a crashed or OOM-killed worker.
    func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// SIGTERM, then waits for a graceful exit; returns the exit status.
    func terminate(timeout: Duration = .seconds(30)) async -> Int32 {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGTERM) }
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { kill() }
        return process.terminationStatus
    }
}

struct ProcessFailure: Error, CustomStringConvertible {
    var description: String
}
