import Foundation
import KSMTestSupport
import Testing

/// One error style for every `ksm` command: a failure at run time is one sentence on standard error
/// naming what is wrong, with no usage text, Swift debug description or source location, and a
/// documented status (64 for a setting or file to fix, 1 otherwise); a malformed command line still
/// gets the usage text.
@Suite struct CommandErrorTests {
    static func check(_ arguments: [String], status: Int32, says expected: String) async throws {
        let result = try await KSMBinary.run(arguments)
        let stderr = String(decoding: result.stderr, as: UTF8.self)
        #expect(result.status == status, "\(arguments): \(stderr)")
        #expect(stderr.contains(expected), "\(arguments): \(stderr)")
        for leak in ["USAGE", "Usage:", "Error(", ".swift:", "retriable:"] {
            #expect(!stderr.contains(leak), "\(arguments) printed \(leak): \(stderr)")
        }
    }

    @Test("runtime failures of admin, process and loadgen are one plain sentence without usage text")
    func runtimeFailures() async throws {
        let nothing = try RefusingLoopbackPort()
        defer { withExtendedLifetime(nothing) {} }
        try await Self.check(
            ["admin", "slots", "--redis-url", "redis://127.0.0.1:\(nothing.port)/0", "--tenant", "t", "--account", "a"],
            status: 1, says: "ksm admin: error: Redis: connect to 127.0.0.1:\(nothing.port)")
        try await Self.check(
            ["admin", "derive-key", "--key-seed", "/nonexistent/seed.hex", "--asset", "a"],
            status: 64, says: "ksm admin: error: Cannot open secret file /nonexistent/seed.hex")
        try await Self.check(
            ["process", "--credentials", "/nonexistent/certificates.json", "Examples/create-ckc.json"],
            status: 64, says: "ksm process: error: ")
    }

    @Test("a malformed command line still shows the usage text and exits 64")
    func malformedCommandLine() async throws {
        let result = try await KSMBinary.run(["admin", "slots", "--no-such-flag"])
        #expect(result.status == 64)
        #expect(String(decoding: result.stderr, as: UTF8.self).contains("Usage:"))
    }

    @Test("help for a subcommand still prints its usage and exits 0")
    func subcommandHelp() async throws {
        for arguments in [["admin", "put-tenant", "--help"], ["serve", "--help"], ["--help"], ["help", "admin"]] {
            let result = try await KSMBinary.run(arguments)
            let out = String(decoding: result.stdout + result.stderr, as: UTF8.self)
            #expect(result.status == 0, "\(arguments): \(out)")
            #expect(out.contains("USAGE"), "\(arguments): \(out)")
        }
    }
}
