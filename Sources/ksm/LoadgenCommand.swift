import ArgumentParser
import Foundation
import KSMLoad
import KSMService
import Logging

/// `ksm loadgen`: simulated Apple devices watching live streams, through Kafka, every CKC checked.
struct LoadgenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loadgen",
        abstract:
            "Send license jobs from simulated devices (joins, then key-rotation bursts), check every CKC, report throughput and latency; with --http, POST them to a license edge instead."
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
    @OptionGroup(title: "HTTP (ksm edge)") var http: HTTPLoadOptions

    func run() async throws {
        if !http.urls.isEmpty {
            try await http.run(scenario: scenario, jsonOnly: json)
            return
        }
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

/// `ksm loadgen --http`: the same simulated devices posting their SPCs to a license edge in every
/// request shape; a JSON summary line at the end, exit 1 when a CKC was wrong or lost.
struct HTTPLoadOptions: ParsableArguments {
    @Option(
        name: .customLong("http"),
        help:
            "A license edge to POST to: its base URL (http://127.0.0.1:8080, /fps/<tenant>/license is added) or a full license URL; repeatable: requests take the edges in turn and a retry goes to the next."
    )
    var urls: [String] = []
    @Option(help: "Requests to send over HTTP, each from a new viewer (device, session, account).")
    var requests = 1_000
    @Option(help: "Open loop: requests per second, whatever the answers do (latency counts from each scheduled send).")
    var rate: Double?
    @Option(help: "Closed loop: requests in flight at once. Default: 32 (when --rate is not given).")
    var concurrency: Int?
    @Option(help: "Request shapes, comma-separated, taken in turn: raw, base64, form, json, apple.")
    var shapes = HTTPLoadShape.allCases.map(\.rawValue).joined(separator: ",")
    @Option(help: "HTTP/1.1 keep-alive connections per edge. Default: the concurrency, or 64 with --rate.")
    var connections: Int?
    @Option(help: "Attempts after the first, with the same X-Request-ID, after a 502/503/504 or a lost connection.")
    var retries = 3
    @Option(help: "Seconds one attempt may take before it is given up.")
    var attemptTimeout: Double = 15
    @Option(help: "Seconds from a request's first send by which its CKC must have come; a later one counts as late.")
    var requestDeadline: Double = 30
    @Option(help: "Prefix of the request IDs and accounts (<run-id>-<index>). Default: random.")
    var runID: String?

    func validate() throws {
        guard urls.isEmpty || requests > 0 else { throw ValidationError("--requests must be at least 1") }
        if let rate, !(rate > 0 && rate.isFinite) { throw ValidationError("--rate must be a positive number of requests per second") }
        if let concurrency, concurrency < 1 { throw ValidationError("--concurrency must be at least 1") }
        if rate != nil, concurrency != nil { throw ValidationError("give --rate (open loop) or --concurrency (closed loop), not both") }
        if case .failure(let unknown) = HTTPLoadShape.list(shapes) { throw ValidationError(unknown.description) }
        guard retries >= 0 else { throw ValidationError("--retries must be 0 or more") }
        guard attemptTimeout > 0, requestDeadline > 0 else { throw ValidationError("--attempt-timeout and --request-deadline must be positive") }
    }

    /// The license URL of an edge given by its base URL or its full license URL.
    static func licenseURL(_ given: String, tenant: String) -> String {
        given.contains("/fps/") ? given : given.trimmingSuffix("/") + "/fps/\(tenant)/license"
    }

    func run(scenario: ScenarioOptions, jsonOnly: Bool) async throws {
        var configuration = HTTPLoadGenerator.Configuration(urls: urls.map { Self.licenseURL($0, tenant: scenario.tenant) })
        configuration.requests = requests
        configuration.shapes = (try? HTTPLoadShape.list(shapes).get()) ?? HTTPLoadShape.allCases
        configuration.pace = rate.map { .rate($0) } ?? .concurrency(concurrency ?? 32)
        configuration.connections = connections
        configuration.retries = retries
        configuration.attemptTimeout = .milliseconds(Int64(attemptTimeout * 1000))
        configuration.deadline = .milliseconds(Int64(requestDeadline * 1000))
        configuration.spcVersion = scenario.spcVersion
        if let runID { configuration.runID = runID }
        let test = try TestCredentials(directory: scenario.fixtures)
        let pool = CryptoPool()
        defer { pool.shutdown() }
        let say: @Sendable (String) -> Void = { line in if !jsonOnly { FileHandle.standardError.write(Data((line + "\n").utf8)) } }
        say("making \(requests) SPCs")
        let generator = try await HTTPLoadGenerator(configuration: configuration, catalog: scenario.catalog, trust: test.trust, pool: pool)
        say("sending to \(configuration.urls.joined(separator: ", ")), \(configuration.pace.description)")
        let report = try await generator.run(progress: say)
        if !jsonOnly {
            var lines = [
                "requests:         \(report.requests) (\(report.shapes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))",
                "correct CKCs:     \(report.correct), \(report.ckcPerSecond)/s over \(report.seconds) s, \(report.retries) retries, \(report.late) late",
                "latency (ms):     p50 \(report.latencyMilliseconds.p50)  p90 \(report.latencyMilliseconds.p90)  p99 \(report.latencyMilliseconds.p99)  max \(report.latencyMilliseconds.max)",
            ]
            for (status, count) in report.errorsByStatus.sorted(by: { $0.key < $1.key }) { lines.append("HTTP \(status):         \(count)") }
            for (reason, count) in report.wrong.sorted(by: { $0.key < $1.key }) { lines.append("WRONG:            \(count) x \(reason)") }
            if report.lost > 0 { lines.append("LOST:             \(report.lost) with no answer") }
            lines.append(report.allCorrect ? "result:           every CKC correct" : "result:           FAILED")
            FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        FileHandle.standardOutput.write(try encoder.encode(report) + Data("\n".utf8))
        if !report.allCorrect { throw ExitCode(1) }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        var text = self
        while text.hasSuffix(suffix) { text.removeLast(suffix.count) }
        return text
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
