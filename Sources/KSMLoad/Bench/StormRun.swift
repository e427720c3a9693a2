import ChildProcesses
import FairPlay
import Foundation
import KSMService
import Kafka
import Licensing
import Logging
import OwnedThreads
import RedisStore
import Wire

/// The key-rotation storm through real `ksm serve` processes (``RunningProcess``), one scenario after
/// another, each against the in-process rate measured just before and after it: what `ksm bench
/// storm` runs and reports.
package struct StormRun {
    /// Why the run could not be made; `description` is a sentence for the person at the terminal.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
        package init(_ description: String) { self.description = description }
    }

    package var fixtures: String
    package var viewers: Int
    package var joiners: Int
    package var scenarios: [Scenario]
    /// Extra `ksm serve` flags for every worker.
    package var workerFlags: [String]
    /// The `ksm` binary the workers run.
    package var executable: URL
    /// Named in the output (the allocator the bench runs on).
    package var allocator: String?
    /// One progress line for the person watching.
    package var progress: @Sendable (String) -> Void
    /// The busiest this process's CPUs may be in the second before the storm (processes, interrupts
    /// and steal; ``HostTime``); nil runs on a busy host anyway. Other processes take the storm's
    /// cores, and every figure then measures them too.
    package var busyHostLimit: Double? = 0.25
    /// The prefetch window and margin (seconds) of the window scenarios, compressed from the
    /// production default (60 and 10) so a run stays short; the same for every scenario.
    package var prefetchWindowSeconds: Double = 20
    package var prefetchMarginSeconds: Double = 2
    /// The workers on CPUs of their own and the harness on the rest (``CPUPinning``); nil: every
    /// process shares every core.
    package var pinning: CPUPinning?
    /// Storms per scenario, interleaved (every scenario once, then every one again), so each
    /// scenario's median is taken across the host's phases alike; above 1 the output has medians.
    package var repeats = 1

    /// What the workers' store runs on: one redis-server, a Redis Cluster of three masters with a
    /// replica each, or three masters alone (routing without replication); every node's CPU is
    /// charged to `redis`.
    package enum RedisTopology: String, Sendable, Codable, CaseIterable {
        case single, cluster
        case clusterMasters = "cluster-masters"
    }

    package var redisTopology: RedisTopology

    package init(
        fixtures: String, viewers: Int, joiners: Int, scenarios: [Scenario], workerFlags: [String], executable: URL,
        allocator: String?, redis: RedisTopology = .single, progress: @escaping @Sendable (String) -> Void
    ) {
        self.redisTopology = redis
        self.fixtures = fixtures
        self.viewers = viewers
        self.joiners = joiners
        self.scenarios = scenarios
        self.workerFlags = workerFlags
        self.executable = executable
        self.allocator = allocator
        self.progress = progress
    }

    package struct Scenario: Sendable {
        package var name: String
        package var label: String
        package var processes: Int
        package var flags: [String]
        /// Workers read the class topics (`--class-topics`) and the client sends each class to its own.
        package var classTopics = false
        /// A rotation schedule is put before the storm, and rotating viewers ask at their advertised
        /// `next-key.fetch-at` (StormBenchmark's ``StormBenchmark/Configuration/followWindow``).
        package var followsWindow = false
    }

    package static let known: [String: Scenario] = [
        "on": Scenario(name: "on", label: "smoothing on, 1 worker", processes: 1, flags: []),
        "off": Scenario(name: "off", label: "smoothing off, 1 worker", processes: 1, flags: ["--no-scheduling", "--cache-ttl", "0"]),
        "on-2": Scenario(name: "on-2", label: "smoothing on, 2 workers", processes: 2, flags: []),
        "scheduler-only": Scenario(name: "scheduler-only", label: "scheduler, no cache, 1 worker", processes: 1, flags: ["--cache-ttl", "0"]),
        "cache-only": Scenario(name: "cache-only", label: "cache, FIFO, 1 worker", processes: 1, flags: ["--no-scheduling"]),
        "classes": Scenario(name: "classes", label: "class topics, smoothing on, 1 worker", processes: 1, flags: ["--class-topics"], classTopics: true),
        "classes-2": Scenario(name: "classes-2", label: "class topics, smoothing on, 2 workers", processes: 2, flags: ["--class-topics"], classTopics: true),
        "window": Scenario(name: "window", label: "players follow the advertised window, smoothing on, 1 worker", processes: 1, flags: [], followsWindow: true),
        "window-classes": Scenario(
            name: "window-classes", label: "players follow the advertised window, class topics, 1 worker", processes: 1,
            flags: ["--class-topics"], classTopics: true, followsWindow: true),
    ]

    package struct Output: Codable, Sendable {
        package var machine: String
        /// The allocator the bench and its workers ran on (``Allocator``).
        package var allocator: String?
        /// The store's Redis: one server or a cluster (absent in figures saved before it existed).
        package var redis: RedisTopology?
        package var jobs: Int
        package var inProcessCKCPerSecond: Double
        /// CPU time per CKC in process (all threads of the bench process while the baseline ran).
        package var inProcessCPUMicrosecondsPerJob: Double?
        /// Jobs over the mean of every baseline measurement (for the chart's title).
        package var idealDrainSeconds: Double
        package var runs: [StormReport]
        /// Each run's ideal: jobs over the mean of the baselines measured just before and after it.
        package var idealDrainSecondsByRun: [String: Double]?
        /// drain / that run's ideal, per run label.
        package var drainOverIdeal: [String: Double]
        /// CPU per job of each run (every process) over CPU per CKC in process: the work the fleet
        /// adds, a figure that does not move with how much of the host the VM got at the time.
        package var cpuOverInProcess: [String: Double]?
        /// Every process's CPU per job over the workers' crypto threads' CPU per job, both from the
        /// storm itself: what the fleet, Redis, Kafka and the client add to the RSA work, immune to
        /// host drift and to steal (CPU time is only counted while a thread runs).
        package var cpuOverCrypto: [String: Double]?
        /// The share of the CPUs' time the hypervisor took during each baseline measurement, in order
        /// (before the first scenario, then after each); each run's own is in its `host_steal`.
        package var baselineHostSteal: [Double?]?
        /// drain / (jobs × the workers' crypto CPU per job during the run / cores): the same ratio
        /// with the ideal taken from the storm's own seconds, so host drift between phases cannot move it.
        package var drainOverCryptoTime: [String: Double]?
        /// The continuity jobs alone over the in-process rate: the least time the storm's continuity
        /// class could drain in on these cores (the class topics' yardstick).
        package var continuityIdealSeconds: Double?
        /// Each run's continuity p99 over its continuity-only ideal (jobs over the baselines beside it).
        package var continuityP99OverIdeal: [String: Double]?
        /// Each run's last new-session answer over that run's ideal for the whole storm.
        package var newDrainOverIdeal: [String: Double]?
        package var smoothingGain: Double?
        package var twoWorkersOverOne: Double?
        /// The host's busy share in the second before the storm (``busyHostLimit``).
        package var hostBusyBeforeStart: Double?
        /// The workers' CPUs and the harness's when pinned (``CPUPinning``); nil when every process
        /// shared every core.
        package var workerCPUs: [Int]?
        package var harnessCPUs: [Int]?
        /// Each scenario's medians over its storms, by scenario label (`--repeat` above 1 only).
        package var medians: [String: StormScenarioMedian]?

        enum CodingKeys: String, CodingKey {
            case machine, allocator, redis, jobs, runs
            case inProcessCKCPerSecond = "in_process_ckc_per_second"
            case idealDrainSeconds = "ideal_drain_seconds"
            case inProcessCPUMicrosecondsPerJob = "in_process_cpu_us_per_job"
            case cpuOverInProcess = "cpu_over_in_process"
            case idealDrainSecondsByRun = "ideal_drain_seconds_by_run"
            case drainOverCryptoTime = "drain_over_crypto_time"
            case cpuOverCrypto = "cpu_over_crypto"
            case baselineHostSteal = "baseline_host_steal"
            case continuityIdealSeconds = "continuity_ideal_seconds"
            case continuityP99OverIdeal = "continuity_p99_over_ideal"
            case newDrainOverIdeal = "new_drain_over_ideal"
            case drainOverIdeal = "drain_over_ideal"
            case smoothingGain = "smoothing_gain_off_over_on"
            case twoWorkersOverOne = "drain_one_over_two_workers"
            case hostBusyBeforeStart = "host_busy_before_start"
            case workerCPUs = "worker_cpus"
            case harnessCPUs = "harness_cpus"
            case medians
        }
    }

    /// Runs every scenario; the figures, and the title of their chart.
    package func run() async throws -> (output: Output, title: String) {
        let quietBefore = HostTime.sample()
        try await Task.sleep(for: .seconds(1))
        let busyBefore = HostTime.sample().busyFraction(since: quietBefore)
        if let limit = busyHostLimit, let busyBefore, busyBefore > limit {
            throw Failure(
                "the host was \(Int((busyBefore * 100).rounded())) % busy in the second before the storm (at most \(Int(limit * 100)) %): "
                    + "other processes would take the storm's cores and skew every figure; stop them (ps -eo pid,pcpu,comm --sort=-pcpu), "
                    + "or pass --allow-busy-host")
        }
        progress("host \(Int(((busyBefore ?? 0) * 100).rounded())) % busy before the storm")
        // Before any child starts: redis-server inherits the harness's CPUs from the thread that spawns it.
        if let pinning {
            try await pinning.pinBench()
            progress("workers on CPU \(CPUAffinity.listText(pinning.workerCPUs)); client, broker and Redis on CPU \(CPUAffinity.listText(pinning.harnessCPUs))")
        }
        let chosen = scenarios
        var logger = Logger(label: "ksm.bench.storm")
        logger.logLevel = .error
        let test = try TestCredentials(directory: fixtures)
        let cluster = try KafkaMockCluster(brokers: 1, logger: logger)
        // The workers get the URL; the bench's own client gets the test servers' generous timeouts.
        let redisURL: String
        let redisServers: [RedisServerProcess]
        let endpoint: RedisEndpoint
        let stopRedis: () -> Void
        switch redisTopology {
        case .single:
            let server = try await RedisServerProcess()
            (redisURL, redisServers, endpoint, stopRedis) = (server.url, [server], .single(server.configuration(poolSize: 2)), server.stop)
        case .cluster, .clusterMasters:
            let replicas = redisTopology == .cluster ? 1 : 0
            progress("starting a Redis Cluster: 3 masters, \(replicas) replica(s) each")
            let cluster = try await RedisClusterProcess(masters: 3, replicasPerMaster: replicas)
            (redisURL, redisServers, endpoint, stopRedis) = (cluster.url, cluster.nodes, .cluster(cluster.configuration()), cluster.stop)
        }
        defer { stopRedis() }
        let store = RedisLicenseStore(client: try endpoint.makeClient(logger: logger))
        let catalog = DemoCatalog(tenant: "storm", streams: 8, periods: 2)
        try await catalog.provision(store, credentials: test)
        let kekHex = HexEncoding.encode(catalog.demoKeyEncryptionKey)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-storm-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let kekPath = directory.appendingPathComponent("kek.hex").path
        guard FileManager.default.createFile(atPath: kekPath, contents: Data(kekHex.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw StormRun.Failure("cannot write \(kekPath)")
        }

        // The workers get a private (0600) copy of the test credentials: `ksm serve` refuses secret
        // files readable by group or others, and git checks the fixtures out 0644.
        let credentials = try StormRun.privateCopy(of: fixtures, into: directory.appendingPathComponent("credentials"))

        // Pinned, the baseline has as many crypto threads as a worker gets, on the workers' CPUs.
        let pool = pinning.map { CryptoPool(threadCount: $0.workerCPUs.count) } ?? CryptoPool()
        defer { pool.shutdown() }
        progress("making \(viewers + joiners) SPCs")
        var configuration = StormBenchmark.Configuration(brokers: cluster.bootstrapServers)
        configuration.viewers = viewers
        configuration.joiners = joiners
        configuration.prepareAdvice = chosen.contains { $0.followsWindow }
        let server = KeyServerModule(credentials: try CredentialStore(test.credentials))
        let prepared = try await StormBenchmark(configuration: configuration, catalog: catalog, trust: test.trust, pool: pool, logger: logger)
        var bench = prepared
        // The baseline is measured before and after every scenario, and each scenario is held to the
        // mean of the two beside it: this shared host's speed drifts by a fifth within minutes.
        func measureBaseline() async throws -> StormBenchmark.Baseline {
            // Pinned, only the crypto threads move to the workers' CPUs, and every thread goes back to
            // the harness's after: a thread started from a crypto thread inherits its CPUs.
            if let pinning { try await pinning.pinThreads(named: "ksm-crypto") }
            let measured = await bench.inProcessRate(server: server, pool: pool)
            if let pinning { try await pinning.pinBench() }
            progress(
                "in-process rate \(Int(measured.ckcPerSecond)) CKC/s, \(Int(measured.cpuMicrosecondsPerJob)) µs CPU per CKC, host steal \(measured.hostSteal ?? 0)"
            )
            return measured
        }
        var baselines = [try await measureBaseline()]

        var reports: [StormReport] = []
        let plan = (0..<max(repeats, 1)).flatMap { round in chosen.map { (round: round, scenario: $0) } }
        for (number, (round, scenario)) in plan.enumerated() {
            let label = repeats > 1 ? StormChart.runLabel(scenario: scenario.label, round: round + 1) : scenario.label
            let run = "r\(number)\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
            let requests = "storm.\(run).requests"
            let replies = "storm.\(run).replies"
            try cluster.createTopic(requests, partitions: 12)
            for priority in [LicenseJob.Priority.continuity, .new, .prefetch] where scenario.classTopics {
                try cluster.createTopic(RequestTopics.topic(for: priority, requestsTopic: requests), partitions: 12)
            }
            try cluster.createTopic(replies, partitions: 12)
            try cluster.createTopic("storm.\(run).dlq", partitions: 1)
            try await bench.seedLeases(run: run, store: store)
            var workers: [RunningProcess] = []
            for index in 0..<scenario.processes {
                let adminPort = try RedisServerProcess.freeLoopbackPort()
                let arguments =
                    [
                        "serve", "--brokers", cluster.bootstrapServers, "--redis-url", redisURL,
                        "--credentials", credentials, "--kek", "\(catalog.keyEncryptionKeyID)=\(kekPath)",
                        "--group", "storm-\(run)", "--requests-topic", requests, "--replies-topic", replies, "--dlq-topic", "storm.\(run).dlq",
                        "--kafka-property", "session.timeout.ms=6000", "--log-level", "info", "--admin-port", "\(adminPort)",
                    ]
                    + scenario.flags + (scenario.followsWindow ? windowFlags : []) + workerFlags
                let command = pinning?.workerCommand(executable, arguments) ?? (executable: executable, arguments: arguments)
                let worker = try RunningProcess(
                    "ksm serve \(index)", executable: command.executable, command.arguments,
                    logFile: directory.appendingPathComponent("\(run)-\(index).log"))
                worker.adminPort = adminPort
                workers.append(worker)
            }
            defer { for worker in workers { worker.kill() } }
            try await RunningProcess.waitUntilSettled(workers)
            for worker in workers { try pinning?.verifyWorker(worker.process.processIdentifier) }
            bench.configuration.followWindow = scenario.followsWindow
            bench.configuration.boundaryMilliseconds = 0
            if scenario.followsWindow {
                // The boundary leaves time for every viewer's current-key request to be answered
                // (twice the in-process time, plus 3 s) before the window opens.
                let rate = max(baselines.last?.ckcPerSecond ?? 1_000, 100)
                let budget = 2_000 + Int64(2_000 * Double(viewers) / rate) + 3_000
                let boundary = LicenseProcessor.currentTimeMilliseconds() + budget + Int64((prefetchWindowSeconds + prefetchMarginSeconds) * 1000)
                for schedule in try catalog.rotationSchedules(boundaryMilliseconds: boundary) { try await store.putRotation(schedule) }
                bench.configuration.boundaryMilliseconds = boundary
                // The workers' prefetcher reads schedules every second (`--rotation-interval 1`).
                try await Task.sleep(for: .seconds(2))
                progress(
                    "\(label): boundary in \((boundary - LicenseProcessor.currentTimeMilliseconds()) / 1000) s, window \(prefetchWindowSeconds) s, margin \(prefetchMarginSeconds) s"
                )
            }
            progress("\(label): storm of \(viewers + joiners) jobs")
            bench.configuration.requestsTopic = requests
            bench.configuration.repliesTopic = replies
            bench.configuration.classTopics = scenario.classTopics
            let report = try await bench.run(
                run, label: label,
                processes: [
                    "workers": workers.map(\.process.processIdentifier), "redis-server": redisServers.compactMap(\.processIdentifier),
                ])
            progress(
                "\(label): drained in \(report.drainSeconds) s, \(report.correct)/\(report.jobs) correct, continuity p99 \(report.continuityLatency.p99) ms, peak \(Int(report.peakRepliesPerSecond ?? 0)) replies/s, \(report.rotatingAnsweredAfterBoundary ?? 0) after the boundary, host steal \(report.hostSteal ?? 0)"
            )
            if scenario.followsWindow {
                for schedule in try catalog.rotationSchedules(boundaryMilliseconds: 0) {
                    try await store.removeRotation(tenant: schedule.tenant, assetID: schedule.assetID)
                }
            }
            var classified = report
            classified.classTopics = scenario.classTopics
            reports.append(classified)
            for worker in workers { await worker.terminate() }
            baselines.append(try await measureBaseline())
        }

        let rate = baselines.map(\.ckcPerSecond).reduce(0, +) / Double(baselines.count)
        let inProcessCPU = (baselines.map(\.cpuMicrosecondsPerJob).reduce(0, +) / Double(baselines.count)).rounded()
        let jobs = viewers + joiners
        let ideal = Double(jobs) / rate
        func rounded(_ x: Double) -> Double { (x * 1000).rounded() / 1000 }
        var ratios: [String: Double] = [:]
        var ideals: [String: Double] = [:]
        var cpuRatios: [String: Double] = [:]
        var cryptoRatios: [String: Double] = [:]
        var cpuOverCrypto: [String: Double] = [:]
        var continuityRatios: [String: Double] = [:]
        var newRatios: [String: Double] = [:]
        let cores = Double(pinning?.workerCPUs.count ?? ProcessInfo.processInfo.activeProcessorCount)
        for (index, r) in reports.enumerated() {
            let beside = (baselines[index], baselines[index + 1])
            let runIdeal = Double(jobs) / ((beside.0.ckcPerSecond + beside.1.ckcPerSecond) / 2)
            ideals[r.label] = rounded(runIdeal)
            ratios[r.label] = rounded(r.drainSeconds / runIdeal)
            let continuityIdeal = runIdeal * Double(viewers) / Double(jobs)
            if viewers > 0 { continuityRatios[r.label] = rounded(r.continuityLatency.p99 / 1000 / continuityIdeal) }
            if joiners > 0, let newDrain = r.newDrainSeconds { newRatios[r.label] = rounded(newDrain / runIdeal) }
            let runCPU = (beside.0.cpuMicrosecondsPerJob + beside.1.cpuMicrosecondsPerJob) / 2
            if let total = r.cpuMicrosecondsPerJob?["total"], runCPU > 0 { cpuRatios[r.label] = rounded(total / runCPU) }
            // The drift-free cross-check: the time the workers' crypto threads needed during the storm
            // itself, spread over every core, is the least any drain could take in those seconds. Those
            // threads also run the whole of a batch of at most four jobs (JobAnswerer), which a storm
            // has few of, at its tail; they make this bound a little higher than the RSA alone.
            if let crypto = r.cpuMicrosecondsPerJob?["workers/crypto"], crypto > 0 {
                cryptoRatios[r.label] = rounded(r.drainSeconds / (Double(jobs) * crypto / 1e6 / cores))
                if let total = r.cpuMicrosecondsPerJob?["total"] { cpuOverCrypto[r.label] = rounded(total / crypto) }
            }
        }
        var medians: [String: StormScenarioMedian] = [:]
        for scenario in chosen {
            let mine = reports.map(\.label).filter { StormChart.scenario(of: $0) == scenario.label }
            func median(_ figures: [String: Double]) -> Double? { StormScenarioMedian.median(mine.compactMap { figures[$0] }) }
            guard let drainSeconds = StormScenarioMedian.median(reports.filter { mine.contains($0.label) }.map(\.drainSeconds)),
                let drainOverIdeal = median(ratios)
            else { continue }
            medians[scenario.label] = StormScenarioMedian(
                runs: mine, drainSeconds: drainSeconds, drainOverIdeal: drainOverIdeal,
                newDrainOverIdeal: median(newRatios), continuityP99OverIdeal: median(continuityRatios))
        }
        // Scenarios compared by their (median) drain, so repeated runs compare like single ones.
        func drain(_ name: String) -> Double? { StormRun.known[name].flatMap { medians[$0.label]?.drainSeconds } }
        var output = Output(
            machine: "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory >> 30) GiB",
            allocator: allocator, redis: redisTopology, jobs: jobs, inProcessCKCPerSecond: rate.rounded(), inProcessCPUMicrosecondsPerJob: inProcessCPU,
            idealDrainSeconds: rounded(ideal), runs: reports,
            idealDrainSecondsByRun: ideals, drainOverIdeal: ratios, cpuOverInProcess: cpuRatios, cpuOverCrypto: cpuOverCrypto,
            baselineHostSteal: baselines.map(\.hostSteal), drainOverCryptoTime: cryptoRatios,
            continuityIdealSeconds: rounded(Double(viewers) / rate), continuityP99OverIdeal: continuityRatios, newDrainOverIdeal: newRatios,
            smoothingGain: drain("off").flatMap { off in drain("on").map { (off / $0 * 1000).rounded() / 1000 } },
            twoWorkersOverOne: drain("on").flatMap { one in drain("on-2").map { (one / $0 * 1000).rounded() / 1000 } })
        output.hostBusyBeforeStart = busyBefore
        output.workerCPUs = pinning?.workerCPUs
        output.harnessCPUs = pinning?.harnessCPUs
        if repeats > 1 {
            output.medians = medians
            for scenario in chosen {
                guard let m = medians[scenario.label] else { continue }
                progress(
                    "\(scenario.label): median of \(m.runs.count): drain/ideal \(m.drainOverIdeal), last new-session answer/ideal \(m.newDrainOverIdeal.map { "\($0)" } ?? "n/a"), continuity p99/ideal \(m.continuityP99OverIdeal.map { "\($0)" } ?? "n/a")"
                )
            }
        }
        withExtendedLifetime(cluster) {}
        return (output, Self.title(viewers: viewers, joiners: joiners, ideal: ideal, workerCPUs: pinning?.workerCPUs))
    }

    /// The `ksm serve` flags of a window scenario: the window, its margin, and a prefetch pass every
    /// second so the schedule put just before the storm is read at once.
    var windowFlags: [String] {
        ["--prefetch-window", "\(prefetchWindowSeconds)", "--prefetch-margin", "\(prefetchMarginSeconds)", "--rotation-interval", "1"]
    }

    /// Copies a credentials directory with every file `chmod 600`; returns its certificates.json.
    package static func privateCopy(of fixtures: String, into target: URL) throws -> String {
        let fm = FileManager.default
        try fm.copyItem(at: URL(fileURLWithPath: fixtures), to: target)
        for name in try fm.contentsOfDirectory(atPath: target.path) {
            try fm.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target.appendingPathComponent(name).path)
        }
        return target.appendingPathComponent("certificates.json").path
    }

    package static func title(viewers: Int, joiners: Int, ideal: Double, workerCPUs: [Int]? = nil) -> String {
        let pinned = workerCPUs.map { ", workers on CPU \(CPUAffinity.listText($0))" } ?? ""
        return "Key-rotation storm: \(viewers) viewers rotate + \(joiners) join within 1 s (ideal drain \(String(format: "%.1f", ideal)) s\(pinned))"
    }
}
