import Foundation
import KSMTestSupport

/// Prometheus's `promtool` (Debian's `prometheus` package; scripts/install-deps.sh installs it).
/// Every call fails with a message saying so when it is missing: these checks never skip quietly.
enum Promtool {
    struct Missing: Error, CustomStringConvertible {
        var description: String { "promtool not found on PATH: install Debian's prometheus package (scripts/install-deps.sh)" }
    }

    static func path() throws -> String {
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for dir in dirs + ["/usr/bin", "/usr/local/bin"] {
            let candidate = "\(dir)/promtool"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw Missing()
    }

    /// Runs promtool with `arguments` in the package root, `input` on stdin; exit status and output.
    static func run(_ arguments: [String], input: String? = nil) async throws -> (status: Int32, output: String) {
        let result = try await ProcessRunner.run(
            URL(fileURLWithPath: try path()), arguments, currentDirectory: KSMBinary.packageRoot,
            input: input.map { Array($0.utf8) }, mergeOutput: true, timeout: .seconds(120))
        return (result.status, result.stdoutText)
    }

    /// `promtool check metrics` on an exposition body (lint included: help text, counter names, units).
    static func checkMetrics(_ text: String) async throws -> (status: Int32, output: String) {
        try await run(["check", "metrics"], input: text)
    }
}
