import Foundation
import KSMTestSupport
import Testing

/// The shipping binary links no test code. `TestRunWatchdog`'s constructors end a process that runs
/// long and change its signal handling and descriptor limit; `KSMTestSupport` holds fixtures. The
/// tools in `ksm` (`bench`, `loadgen`, `demo`) use `ChildProcesses` and `Loopback` instead.
@Suite struct ShippingBinaryTests {
    /// Module names as they appear in mangled Swift symbols, and the C watchdog's own symbols.
    static let testOnly = ["KSMTestSupport", "TestRunWatchdog", "ksm_test_", "ksm_is_test_bundle"]

    @Test("ksm holds no symbol of KSMTestSupport or TestRunWatchdog")
    func ksmLinksNoTestSupport() async throws {
        let result = try await ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["nm", KSMBinary.url.path], timeout: .seconds(300))
        #expect(result.succeeded, "nm \(KSMBinary.url.path): \(result.stderrText.suffix(2000))")
        let symbols = result.stdoutText.split(separator: "\n")
        // A check that finds nothing must have looked: the tools' own support is there by name.
        #expect(symbols.contains { $0.contains("14ChildProcesses") }, "nm listed no ChildProcesses symbol in \(KSMBinary.url.path)")
        let found = symbols.filter { line in Self.testOnly.contains { line.contains($0) } }
        #expect(found.isEmpty, "\(KSMBinary.url.path) links test code (\(found.count) symbols): \(found.prefix(20).joined(separator: "\n"))")
    }
}
