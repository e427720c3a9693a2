import Foundation
import KSMTestSupport
import Testing

/// The sources follow the checked-in `.swift-format`: `swift format lint --strict` over every Swift
/// folder finds nothing, so a change that drifts from it fails here, not in a reviewer's eye.
@Suite struct SourceFormatTests {
    @Test("swift format lint --strict passes with the checked-in configuration")
    func lintPasses() async throws {
        let swift =
            ["/opt/swift/usr/bin/swift", "/usr/bin/swift", "/usr/local/bin/swift"].first { FileManager.default.isExecutableFile(atPath: $0) }
            ?? ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map { "\($0)/swift" }.first {
                FileManager.default.isExecutableFile(atPath: $0)
            }
        let executable = try #require(swift, "no swift on PATH")
        let result = try await ProcessRunner.run(
            URL(fileURLWithPath: executable),
            ["format", "lint", "--strict", "--recursive", "--configuration", ".swift-format", "Sources", "Tests", "Examples", "FuzzTesting/Sources"],
            currentDirectory: KSMBinary.packageRoot, timeout: .seconds(300))
        let output = String(decoding: result.stdout + result.stderr, as: UTF8.self)
        #expect(result.status == 0, "\(output.split(separator: "\n").prefix(40).joined(separator: "\n"))")
        #expect(!output.contains("warning:") && !output.contains("error:"), "\(output.prefix(4000))")
    }
}
