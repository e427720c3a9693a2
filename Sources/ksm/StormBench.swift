import ArgumentParser
import FairPlay
import Foundation
import Kafka
import KSMLoad
import KSMService
import KSMTestSupport
import Licensing
import Logging
import RedisStore
import Wire

/// `ksm bench storm`: the key-rotation storm through real `ksm serve` processes, three ways in one run:
/// smoothing on (scheduler + cache) with one worker process, smoothing off (FIFO, no cache) with one,
/// and smoothing on with two processes. Prints JSON; draws the chart as SVG.
struct StormBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storm",
        abstract: "Key-rotation storm through Kafka, Redis and ksm serve processes: drain time against the ideal, latency per priority class, smoothing on/off, 1 vs 2 workers."
    )

    @Option(help: "Directory with the test credentials.")
    var fixtures = "Fixtures/test-credentials"
    @Option(help: "Viewers already playing; all ask for the next key within the window.")
    var viewers = 20_000
    @Option(help: "New viewers joining during the storm.")
    var joiners = 2_000
    @Option(help: "Where to write the chart (SVG).")
    var chart = "docs/storm.svg"
    @Option(help: "Redraw the chart from figures saved by an earlier run (the JSON beside its chart) and exit.")
    var redraw: String?
    @Option(parsing: .upToNextOption, help: "Scenarios to run, in order: on, off, on-2 (two worker processes), scheduler-only, cache-only.")
    var scenarios: [String] = ["on", "off", "on-2"]
    @Option(help: "Extra `ksm serve` flags for every worker, space-separated (e.g. `--worker-flags=\"--max-batch-size 128\"`), to compare settings.")
    var workerFlags = ""

    struct Scenario {
        var name: String
        var label: String
        var processes: Int
        var flags: [String]
    }

    static let known: [String: Scenario] = [
        "on": Scenario(name: "on", label: "smoothing on, 1 worker", processes: 1, flags: []),
        "off": Scenario(name: "off", label: "smoothing off, 1 worker", processes: 1, flags: ["--no-scheduling", "--cache-ttl", "0"]),
        "on-2": Scenario(name: "on-2", label: "smoothing on, 2 workers", processes: 2, flags: []),
        "scheduler-only": Scenario(name: "scheduler-only", label: "scheduler, no cache, 1 worker", processes: 1, flags: ["--cache-ttl", "0"]),
        "cache-only": Scenario(name: "cache-only", label: "cache, FIFO, 1 worker", processes: 1, flags: ["--no-scheduling"]),
    ]

    struct Output: Codable {
        var machine: String
        /// The allocator the bench and its workers ran on (``Allocator``).
        var allocator: String?
        var jobs: Int
        var inProcessCKCPerSecond: Double
        /// CPU time per CKC in process (all threads of the bench process while the baseline ran).
        var inProcessCPUMicrosecondsPerJob: Double?
        /// Jobs over the mean of every baseline measurement (for the chart's title).
        var idealDrainSeconds: Double
        var runs: [StormReport]
        /// Each run's ideal: jobs over the mean of the baselines measured just before and after it.
        var idealDrainSecondsByRun: [String: Double]?
        /// drain / that run's ideal, per run label.
        var drainOverIdeal: [String: Double]
        /// CPU per job of each run (every process) over CPU per CKC in process: the work the fleet
        /// adds, a figure that does not move with how much of the host the VM got at the time.
        var cpuOverInProcess: [String: Double]?
        /// Every process's CPU per job over the workers' crypto threads' CPU per job, both from the
        /// storm itself: what the fleet, Redis, Kafka and the client add to the RSA work, immune to
        /// host drift and to steal (CPU time is only counted while a thread runs).
        var cpuOverCrypto: [String: Double]?
        /// The share of the machine the hypervisor took during each baseline measurement, in order
        /// (before the first scenario, then after each); each run's own is in its `host_steal`.
        var baselineHostSteal: [Double?]?
        /// drain / (jobs × the workers' crypto CPU per job during the run / cores): the same ratio
        /// with the ideal taken from the storm's own seconds, so host drift between phases cannot move it.
        var drainOverCryptoTime: [String: Double]?
        var smoothingGain: Double?
        var twoWorkersOverOne: Double?

        enum CodingKeys: String, CodingKey {
            case machine, allocator, jobs, runs
            case inProcessCKCPerSecond = "in_process_ckc_per_second", idealDrainSeconds = "ideal_drain_seconds"
            case inProcessCPUMicrosecondsPerJob = "in_process_cpu_us_per_job", cpuOverInProcess = "cpu_over_in_process"
            case idealDrainSecondsByRun = "ideal_drain_seconds_by_run", drainOverCryptoTime = "drain_over_crypto_time"
            case cpuOverCrypto = "cpu_over_crypto", baselineHostSteal = "baseline_host_steal"
            case drainOverIdeal = "drain_over_ideal", smoothingGain = "smoothing_gain_off_over_on", twoWorkersOverOne = "drain_one_over_two_workers"
        }
    }

    func run() async throws {
        if let redraw {
            guard let data = FileManager.default.contents(atPath: redraw) else { throw ValidationError("cannot read \(redraw)") }
            let saved = try JSONDecoder().decode(Output.self, from: data)
            let svg = StormChart.svg(saved.runs, title: Self.title(viewers: viewers, joiners: joiners, ideal: saved.idealDrainSeconds))
            try svg.write(toFile: chart, atomically: true, encoding: .utf8)
            return
        }
        let chosen = try scenarios.map { name -> Scenario in
            guard let s = Self.known[name] else { throw ValidationError("unknown scenario \(name); use on, off, on-2") }
            return s
        }
        var logger = Logger(label: "ksm.bench.storm")
        logger.logLevel = .error
        let progress = { (line: String) in FileHandle.standardError.write(Data("[storm] \(line)\n".utf8)) }
        let test = try TestCredentials(directory: fixtures)
        let cluster = try KafkaMockCluster(brokers: 1, logger: logger)
        let redis = try await RedisServerProcess()
        defer { redis.stop() }
        let store = RedisLicenseStore(client: try RedisClient(configuration: redis.configuration(poolSize: 2), logger: logger))
        let catalog = DemoCatalog(tenant: "storm", streams: 8, periods: 2)
        let keyring = KeyEncryptionKeyring()
        var kek = catalog.demoKeyEncryptionKey
        let kekHex = HexEncoding.encode(kek)
        try keyring.add(id: try StoreIdentifier(catalog.keyEncryptionKeyID), key: &kek)
        try await catalog.provision(store, keyring: keyring, certificateHashes: test.credentials.map(\.certificateHash))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-storm-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let kekPath = directory.appendingPathComponent("kek.hex").path
        guard FileManager.default.createFile(atPath: kekPath, contents: Data(kekHex.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ValidationError("cannot write \(kekPath)")
        }

        // The workers get a private (0600) copy of the test credentials: `ksm serve` refuses secret
        // files readable by group or others, and git checks the fixtures out 0644.
        let credentials = try Self.privateCopy(of: fixtures, into: directory.appendingPathComponent("credentials"))

        let pool = CryptoPool()
        defer { pool.shutdown() }
        progress("making \(viewers + joiners) SPCs")
        var configuration = StormBenchmark.Configuration(brokers: cluster.bootstrapServers)
        configuration.viewers = viewers
        configuration.joiners = joiners
        let server = KeyServerModule(credentials: try CredentialStore(test.credentials))
        let prepared = try await StormBenchmark(configuration: configuration, catalog: catalog, trust: test.trust, pool: pool, logger: logger)
        var bench = prepared
        // The baseline is measured before and after every scenario, and each scenario is held to the
        // mean of the two beside it: this shared host's speed drifts by a fifth within minutes.
        func measureBaseline() async -> StormBenchmark.Baseline {
            let measured = await bench.inProcessRate(server: server, pool: pool)
            progress("in-process rate \(Int(measured.ckcPerSecond)) CKC/s, \(Int(measured.cpuMicrosecondsPerJob)) µs CPU per CKC, host steal \(measured.hostSteal ?? 0)")
            return measured
        }
        var baselines = [await measureBaseline()]

        var reports: [StormReport] = []
        for (number, scenario) in chosen.enumerated() {
            let run = "r\(number)\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
            let requests = "storm.\(run).requests", replies = "storm.\(run).replies"
            try cluster.createTopic(requests, partitions: 12)
            try cluster.createTopic(replies, partitions: 12)
            try cluster.createTopic("storm.\(run).dlq", partitions: 1)
            try await bench.seedLeases(run: run, store: store)
            var workers: [WorkerProcess] = []
            for index in 0..<scenario.processes {
                workers.append(try WorkerProcess.start(
                    log: directory.appendingPathComponent("\(run)-\(index).log"),
                    arguments: ["serve", "--brokers", cluster.bootstrapServers, "--redis-url", "redis://127.0.0.1:\(redis.port)",
                                "--credentials", credentials, "--kek", "\(catalog.keyEncryptionKeyID)=\(kekPath)",
                                "--group", "storm-\(run)", "--requests-topic", requests, "--replies-topic", replies, "--dlq-topic", "storm.\(run).dlq",
                                "--kafka-property", "session.timeout.ms=6000", "--log-level", "info"] + scenario.flags
                                + workerFlags.split(separator: " ").map(String.init)))
            }
            defer { workers.forEach { $0.terminate() } }
            try await WorkerProcess.waitUntilSettled(workers)
            progress("\(scenario.label): storm of \(viewers + joiners) jobs")
            bench.configuration.requestsTopic = requests
            bench.configuration.repliesTopic = replies
            let report = try await bench.run(run, label: scenario.label, processes: [
                "workers": workers.map(\.process.processIdentifier), "redis-server": redis.processIdentifier.map { [$0] } ?? [],
            ])
            progress("\(scenario.label): drained in \(report.drainSeconds) s, \(report.correct)/\(report.jobs) correct, host steal \(report.hostSteal ?? 0)")
            reports.append(report)
            workers.forEach { $0.terminate() }
            for worker in workers { await worker.waitForExit() }
            baselines.append(await measureBaseline())
        }

        let rate = baselines.map(\.ckcPerSecond).reduce(0, +) / Double(baselines.count)
        let inProcessCPU = (baselines.map(\.cpuMicrosecondsPerJob).reduce(0, +) / Double(baselines.count)).rounded()
        let jobs = viewers + joiners
        let ideal = Double(jobs) / rate
        func rounded(_ x: Double) -> Double { (x * 1000).rounded() / 1000 }
        var ratios: [String: Double] = [:], ideals: [String: Double] = [:], cpuRatios: [String: Double] = [:], cryptoRatios: [String: Double] = [:]
        var cpuOverCrypto: [String: Double] = [:]
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        for (index, r) in reports.enumerated() {
            let beside = (baselines[index], baselines[index + 1])
            let runIdeal = Double(jobs) / ((beside.0.ckcPerSecond + beside.1.ckcPerSecond) / 2)
            ideals[r.label] = rounded(runIdeal)
            ratios[r.label] = rounded(r.drainSeconds / runIdeal)
            let runCPU = (beside.0.cpuMicrosecondsPerJob + beside.1.cpuMicrosecondsPerJob) / 2
            if let total = r.cpuMicrosecondsPerJob?["total"], runCPU > 0 { cpuRatios[r.label] = rounded(total / runCPU) }
            // The drift-free cross-check: the time the workers' crypto threads needed during the storm
            // itself, spread over every core, is the least any drain could take in those seconds.
            if let crypto = r.cpuMicrosecondsPerJob?["workers/crypto"], crypto > 0 {
                cryptoRatios[r.label] = rounded(r.drainSeconds / (Double(jobs) * crypto / 1e6 / cores))
                if let total = r.cpuMicrosecondsPerJob?["total"] { cpuOverCrypto[r.label] = rounded(total / crypto) }
            }
        }
        func drain(_ name: String) -> Double? { reports.first { $0.label == Self.known[name]?.label }?.drainSeconds }
        let output = Output(
            machine: "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory >> 30) GiB",
            allocator: Allocator.description, jobs: jobs, inProcessCKCPerSecond: rate.rounded(), inProcessCPUMicrosecondsPerJob: inProcessCPU,
            idealDrainSeconds: rounded(ideal), runs: reports,
            idealDrainSecondsByRun: ideals, drainOverIdeal: ratios, cpuOverInProcess: cpuRatios, cpuOverCrypto: cpuOverCrypto,
            baselineHostSteal: baselines.map(\.hostSteal), drainOverCryptoTime: cryptoRatios,
            smoothingGain: drain("off").flatMap { off in drain("on").map { (off / $0 * 1000).rounded() / 1000 } },
            twoWorkersOverOne: drain("on").flatMap { one in drain("on-2").map { (one / $0 * 1000).rounded() / 1000 } })
        let svg = StormChart.svg(reports, title: Self.title(viewers: viewers, joiners: joiners, ideal: ideal))
        try svg.write(toFile: chart, atomically: true, encoding: .utf8)
        // The full figures, timeline included, beside the chart.
        let full = JSONEncoder()
        full.outputFormatting = [.prettyPrinted, .sortedKeys]
        try full.encode(output).write(to: URL(fileURLWithPath: chart).deletingPathExtension().appendingPathExtension("json"))
        progress("chart written to \(chart)")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        var printable = output
        // The timeline is in the chart; keep the printed JSON readable.
        printable.runs = printable.runs.map { var r = $0; r.timeline = []; return r }
        FileHandle.standardOutput.write(try encoder.encode(printable) + Data("\n".utf8))
        withExtendedLifetime(cluster) {}
        if reports.contains(where: { !$0.allCorrect }) { throw ExitCode(1) }
    }

    /// Copies a credentials directory with every file `chmod 600`; returns its certificates.json.
    static func privateCopy(of fixtures: String, into target: URL) throws -> String {
        let fm = FileManager.default
        try fm.copyItem(at: URL(fileURLWithPath: fixtures), to: target)
        for name in try fm.contentsOfDirectory(atPath: target.path) {
            try fm.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target.appendingPathComponent(name).path)
        }
        return target.appendingPathComponent("certificates.json").path
    }
}

extension StormBench {
    static func title(viewers: Int, joiners: Int, ideal: Double) -> String {
        "Key-rotation storm: \(viewers) viewers rotate + \(joiners) join within 1 s (ideal drain \(String(format: "%.1f", ideal)) s)"
    }
}

/// A `ksm serve` child process of this binary, its output in a log file.
final class WorkerProcess: @unchecked Sendable {
    let process: Process
    let log: URL

    private init(process: Process, log: URL) {
        self.process = process
        self.log = log
    }

    static func start(log: URL, arguments: [String]) throws -> WorkerProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return WorkerProcess(process: process, log: log)
    }

    /// How many times the worker logged a change of its partitions so far.
    var rebalances: Int {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.components(separatedBy: "partitions assigned").count - 1 + text.components(separatedBy: "partitions revoked").count - 1
    }

    var hasPartitions: Bool {
        ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("partitions assigned")
    }

    /// Waits until every worker owns partitions and no rebalance happened for 1.5 s (cooperative
    /// rebalancing moves partitions in steps).
    static func waitUntilSettled(_ workers: [WorkerProcess], timeout: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + timeout
        var last = -1
        var since = ContinuousClock.now
        while ContinuousClock.now < deadline {
            if let dead = workers.first(where: { !$0.process.isRunning }) {
                throw ValidationError("ksm serve exited early; see \(dead.log.path): \((try? String(contentsOf: dead.log, encoding: .utf8))?.suffix(600) ?? "")")
            }
            let count = workers.reduce(0) { $0 + $1.rebalances }
            if count != last {
                last = count
                since = .now
            } else if workers.allSatisfy(\.hasPartitions), ContinuousClock.now - since > .milliseconds(1_500) {
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ValidationError("workers did not settle within \(timeout)")
    }

    func terminate() {
        if process.isRunning { process.terminate() }
    }

    func waitForExit(timeout: Duration = .seconds(30)) async {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
