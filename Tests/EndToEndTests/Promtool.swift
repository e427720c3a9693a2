import Foundation

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
    static func run(_ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try path())
        process.arguments = arguments
        process.currentDirectoryURL = KSMBinary.packageRoot
        let stdin = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try stdin.fileHandleForWriting.close()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// `promtool check metrics` on an exposition body (lint included: help text, counter names, units).
    static func checkMetrics(_ text: String) throws -> (status: Int32, output: String) {
        try run(["check", "metrics"], input: text)
    }
}
