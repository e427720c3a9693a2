import ArgumentParser
import FairPlay
import FairPlayDevice
import Foundation
import KSMService

/// `ksm bench`: performance scenarios, each against a baseline measured in the same run.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run a benchmark scenario and print JSON.",
        subcommands: [FairPlayBench.self]
    )
}

/// `ksm bench fairplay`: SPC to CKC per second on one core vs raw RSA-OAEP decrypts per second.
struct FairPlayBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fairplay",
        abstract: "SPC-to-CKC rate on one core for SPC v1 and v2 against the raw RSA-OAEP decrypt rate with the same keys."
    )

    @Option(name: .long, help: "Directory with the test credentials (Fixtures/test-credentials).")
    var fixtures: String = "Fixtures/test-credentials"

    @Option(name: .long, help: "Measuring seconds per SPC version.")
    var seconds: Double = 4

    func run() throws {
        let test = try TestCredentials(directory: fixtures)
        let server = KeyServerModule(credentials: try CredentialStore(test.credentials))
        let bench = FairPlayBenchmark(server: server, device: SimulatedDevice(trust: test.trust), seconds: seconds)
        let results = try [UInt32(1), 2].map { try bench.run(version: $0) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let report: [String: FairPlayBenchmark.Result] = ["spc_v1": results[0], "spc_v2": results[1]]
        FileHandle.standardOutput.write(try encoder.encode(report) + Data("\n".utf8))
    }
}
