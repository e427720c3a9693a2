import Foundation
import KSMTestSupport
import Testing

/// The sources follow the checked-in `.swift-format`: `swift format lint --strict` over every Swift
/// folder finds nothing, so a change that drifts from it fails here, not in a reviewer's eye.
@Suite struct SourceFormatTests {
    @Test("swift format lint --strict passes with the checked-in configuration")
    func lintPasses() async throws {
        try await expectLintPasses(configuration: ".swift-format", ["Sources", "Tests", "Examples", "FuzzTesting/Sources"])
    }

    /// Tests may force unwrap (a crash there is a failed test); shipped code may not: an invariant
    /// that cannot hold says so in a `preconditionFailure` with its reason, or the code is shaped so
    /// there is nothing to unwrap. The checked-in rules, plus swift-format's `NeverForceUnwrap` (which
    /// covers `as!`) and `NeverUseForceTry`, over everything but the tests.
    @Test("shipped code has no force unwrap, force cast or force try")
    func noForceUnwrapOutsideTests() async throws {
        let checkedIn = try Data(contentsOf: KSMBinary.packageRoot.appendingPathComponent(".swift-format"))
        var configuration = try #require(try JSONSerialization.jsonObject(with: checkedIn) as? [String: Any])
        var rules = try #require(configuration["rules"] as? [String: Any])
        rules["NeverForceUnwrap"] = true
        rules["NeverUseForceTry"] = true
        configuration["rules"] = rules
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-format-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("strict.swift-format")
        try JSONSerialization.data(withJSONObject: configuration).write(to: path)
        try await expectLintPasses(configuration: path.path, ["Sources", "Examples", "FuzzTesting/Sources"])
    }

    private func expectLintPasses(configuration: String, _ folders: [String]) async throws {
        let swift =
            ["/opt/swift/usr/bin/swift", "/usr/bin/swift", "/usr/local/bin/swift"].first { FileManager.default.isExecutableFile(atPath: $0) }
            ?? ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map { "\($0)/swift" }.first {
                FileManager.default.isExecutableFile(atPath: $0)
            }
        let executable = try #require(swift, "no swift on PATH")
        let result = try await ProcessRunner.run(
            URL(fileURLWithPath: executable), ["format", "lint", "--strict", "--recursive", "--configuration", configuration] + folders,
            currentDirectory: KSMBinary.packageRoot, timeout: .seconds(300))
        let output = String(decoding: result.stdout + result.stderr, as: UTF8.self)
        #expect(result.status == 0, "\(output.split(separator: "\n").prefix(40).joined(separator: "\n"))")
        #expect(!output.contains("warning:") && !output.contains("error:"), "\(output.prefix(4000))")
    }
}
