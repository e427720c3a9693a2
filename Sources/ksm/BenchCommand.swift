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
        let dir = URL(fileURLWithPath: fixtures)
        func file(_ name: String) throws -> [UInt8] {
            guard let data = FileManager.default.contents(atPath: dir.appendingPathComponent(name).path) else {
                throw ValidationError("cannot read \(name) in \(fixtures); run from the repository root or pass --fixtures")
            }
            return Array(data)
        }
        let credentials = try CredentialsFile.load(path: dir.appendingPathComponent("certificates.json").path)
        let server = KeyServerModule(credentials: try CredentialStore(credentials))
        guard case .applicationSecretKey(let ask) = credentials[0].sessionKeySource else { throw ValidationError("test credentials must use an ASk") }
        let trust = try DeviceTrust(certificateDER: try file("test_certificate.der"), publicKey2048: try RSAPublicKey(publicKeyPEMOrDER: try file("test_public_key_2048.pem")), ask: ask)
        let bench = FairPlayBenchmark(server: server, device: SimulatedDevice(trust: trust), seconds: seconds)
        let results = try [UInt32(1), 2].map { try bench.run(version: $0) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let report: [String: FairPlayBenchmark.Result] = ["spc_v1": results[0], "spc_v2": results[1]]
        FileHandle.standardOutput.write(try encoder.encode(report) + Data("\n".utf8))
    }
}
