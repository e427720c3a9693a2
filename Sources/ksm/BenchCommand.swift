import ArgumentParser
import Foundation
import KSMLoad

/// `ksm bench`: performance scenarios, each against a baseline measured in the same run.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run a benchmark scenario and print JSON.",
        subcommands: [FairPlayBench.self, EndToEndBench.self, StormBench.self, HTTPBench.self]
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

    @Option(name: .customLong("process-spcs"), help: "SPCs in the create-ckc request of the process rows (ksm process's whole path); 0 skips them.")
    var processSPCs: Int = 2000

    @Option(name: .long, help: "Rounds of the process rows, each one request and the same SPCs' RSA decrypts.")
    var processRounds: Int = 4

    func run() throws {
        let bench = try FairPlayBenchmark(fixtures: fixtures, seconds: seconds)
        var report: [String: FairPlayBenchmark.Result] = [:]
        for version in [UInt32(1), 2] {
            report["spc_v\(version)"] = try bench.run(version: version)
            if processSPCs > 0 {
                report["process_v\(version)"] = try bench.runProcess(version: version, spcCount: processSPCs, rounds: processRounds)
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        FileHandle.standardOutput.write(try encoder.encode(report) + Data("\n".utf8))
    }
}

/// `ksm bench e2e`: CKCs per second through Kafka and Redis against the in-process rate, same run.
struct EndToEndBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "e2e",
        abstract: "End-to-end CKCs/s (mock Kafka cluster, real Redis, in-process workers) against the in-process SPC-to-CKC rate on the same cores."
    )

    @Option(help: "Directory with the test credentials.")
    var fixtures = "Fixtures/test-credentials"
    @Option(help: "Jobs to send.")
    var jobs = 4000
    @Option(help: "Workers (consumer group members) in this process.")
    var workers = 1
    @Option(help: "Redis to use; default: a redis-server from PATH started on a free loopback port.")
    var redisURL: String?
    @Flag(help: "Read Redis for every job (no worker cache), for the comparison.")
    var noCache = false
    @Option(help: "Worker batch size.")
    var batchSize = 64
    @Option(help: "Batches each worker processes at once. Default: four per crypto thread, as ksm serve.")
    var concurrentBatches: Int?

    func run() async throws {
        var setup = EndToEndBenchmark.Setup()
        setup.fixtures = fixtures
        setup.jobs = jobs
        setup.workers = workers
        setup.redisURL = redisURL
        setup.cache = !noCache
        setup.batchSize = batchSize
        setup.concurrentBatches = concurrentBatches
        let result = try await EndToEndBenchmark.run(setup)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        FileHandle.standardOutput.write(try encoder.encode(result) + Data("\n".utf8))
        if result.correct != result.jobs { throw ExitCode(1) }
    }
}
