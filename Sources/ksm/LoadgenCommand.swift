import ArgumentParser
import Foundation
import KSMLoad
import KSMService
import Logging

/// `ksm loadgen`: simulated Apple devices watching live streams, through Kafka, every CKC checked.
struct LoadgenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loadgen",
        abstract: "Send license jobs from simulated devices (joins, then key-rotation bursts), check every CKC, report throughput and latency."
    )

    @OptionGroup var scenario: ScenarioOptions
    @Option(help: "Kafka bootstrap servers (env KSM_KAFKA_BROKERS).")
    var brokers: String?
    @Option(help: "Requests topic.")
    var requestsTopic = "fps.license.requests"
    @Option(help: "Replies topic (the loadgen reads it with a group of its own).")
    var repliesTopic = "fps.license.replies"
    @Flag(help: "Print the report as JSON only.")
    var json = false
    @Option(help: "Seconds to wait for the brokers before failing with a clear error.")
    var connectTimeout: Double = 15

    func run() async throws {
        guard let brokers = brokers ?? ProcessInfo.processInfo.environment["KSM_KAFKA_BROKERS"] else {
            throw ValidationError("no Kafka brokers: pass --brokers or set KSM_KAFKA_BROKERS")
        }
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: "ksm.loadgen")
        logger.logLevel = .warning
        var configuration = LoadGeneratorConfiguration(brokers: brokers)
        configuration.requestsTopic = requestsTopic
        configuration.repliesTopic = repliesTopic
        guard connectTimeout > 0, connectTimeout.isFinite else { throw ValidationError("--connect-timeout must be a positive number of seconds") }
        configuration.connectTimeout = .milliseconds(Int64(connectTimeout * 1000))
        scenario.apply(to: &configuration)
        let test = try TestCredentials(directory: scenario.fixtures)
        let generator = LoadGenerator(configuration: configuration, catalog: scenario.catalog, trust: test.trust, logger: logger)
        let quiet = json
        let report = try await generator.run { line in if !quiet { FileHandle.standardError.write(Data((line + "\n").utf8)) } }
        ReportPrinter.print(report, json: json)
        if !report.allCorrect { throw ExitCode(1) }
    }
}

/// The scenario knobs shared by `ksm loadgen` and `ksm demo`.
struct ScenarioOptions: ParsableArguments {
    @Option(help: "Simulated viewers (devices).")
    var viewers = 300
    @Option(help: "Accounts the viewers are spread over. Default: one per viewer.")
    var accounts: Int?
    @Option(help: "Live streams.")
    var streams = 4
    @Option(help: "Key periods per stream in the catalogue.")
    var periods = 4
    @Option(help: "Viewers joining per second.")
    var joinRate: Double = 300
    @Option(help: "Key rotations after the joins; each makes every viewer ask at once.")
    var rotations = 1
    @Option(help: "Seconds before each rotation.")
    var rotationInterval: Double = 1
    @Option(help: "SPC version the devices send (1 or 2).")
    var spcVersion: UInt32 = 2
    @Option(help: "Tenant of the demo catalogue.")
    var tenant = "demo"
    @Option(help: "Directory with the test credentials.")
    var fixtures = "Fixtures/test-credentials"

    var catalog: DemoCatalog { DemoCatalog(tenant: tenant, streams: streams, periods: periods) }

    func apply(to c: inout LoadGeneratorConfiguration) {
        c.viewers = viewers
        c.accounts = accounts
        c.joinRate = joinRate
        c.rotations = rotations
        c.rotationInterval = .milliseconds(Int64(rotationInterval * 1000))
        c.spcVersion = spcVersion
    }
}

/// Prints a load report for people (a summary) or machines (JSON).
enum ReportPrinter {
    static func print(_ report: LoadReport, json: Bool) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = (try? encoder.encode(report)) ?? Data()
        if json {
            FileHandle.standardOutput.write(data + Data("\n".utf8))
            return
        }
        var lines = [
            "jobs sent:        \(report.sent)",
            "replies:          \(report.replies) (\(report.correct) correct, \(report.missing) missing, \(report.duplicates) duplicate)",
            "throughput:       \(Int(report.repliesPerSecond)) replies/s over \(report.seconds) s",
            "latency (ms):     p50 \(report.latencyMilliseconds.p50)  p90 \(report.latencyMilliseconds.p90)  p99 \(report.latencyMilliseconds.p99)  max \(report.latencyMilliseconds.max)",
            "rotation burst:   drained in \(report.burstDrainSeconds) s, p99 \(report.burstLatencyMilliseconds.p99) ms",
        ]
        for (reason, count) in report.wrong.sorted(by: { $0.key < $1.key }) { lines.append("WRONG:            \(count) x \(reason)") }
        lines.append(report.allCorrect ? "result:           every reply correct" : "result:           FAILED")
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}
