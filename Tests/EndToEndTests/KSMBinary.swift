import Foundation
import KSMTestSupport

/// Runs the real `ksm` executable built beside the test bundle.
enum KSMBinary {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let shared = packageRoot.deletingLastPathComponent().appendingPathComponent("shared")

    static var url: URL {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = testBinary.deletingLastPathComponent()
        // The xctest runner may live inside a bundle directory; walk up until a `ksm` sits beside us.
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("ksm")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return packageRoot.appendingPathComponent(".build/debug/ksm")
    }

    /// The path of a copy of a fixture credentials file (e.g. "Fixtures/test-credentials/certificates.json")
    /// whose directory was copied with every file `chmod 600`: git checks fixtures out 0644, and the
    /// `ksm` commands that take `--credentials` refuse secret files readable by group or others.
    /// One copy per process and directory; concurrent callers race harmlessly (atomic rename).
    static func privateCredentials(_ relativeFile: String) throws -> String {
        let source = packageRoot.appendingPathComponent(relativeFile)
        let directory = source.deletingLastPathComponent()
        let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("ksm-private-fixtures-\(getpid())")
        let target = root.appendingPathComponent(directory.lastPathComponent)
        let fm = FileManager.default
        if !fm.fileExists(atPath: target.path) {
            try fm.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let staging = root.appendingPathComponent(".staging-\(UUID().uuidString)")
            try fm.copyItem(at: directory, to: staging)
            for name in try fm.contentsOfDirectory(atPath: staging.path) {
                try fm.setAttributes([.posixPermissions: 0o600], ofItemAtPath: staging.appendingPathComponent(name).path)
            }
            if rename(staging.path, target.path) != 0 { try? fm.removeItem(at: staging) }
        }
        return target.appendingPathComponent(source.lastPathComponent).path
    }

    struct Result {
        var status: Int32
        var stdout: [UInt8]
        var stderr: [UInt8]
        var json: Any? { try? JSONSerialization.jsonObject(with: Data(stdout)) }
    }

    /// Runs `ksm` with arguments and optional standard input, in the package root, and waits (at
    /// most `timeout`: a hung command fails its test with its output, it does not hold the suite).
    /// With `environment`, the process gets only that (and this process's PATH), as a container would.
    static func run(
        _ arguments: [String], input: [UInt8]? = nil, environment: [String: String]? = nil,
        timeout: Duration = .seconds(180)
    ) async throws -> Result {
        let environment = environment?.merging(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]) { a, _ in a }
        let output = try await ProcessRunner.run(url, arguments, environment: environment, currentDirectory: packageRoot, input: input, timeout: timeout)
        return Result(status: output.status, stdout: output.stdout, stderr: output.stderr)
    }
}
