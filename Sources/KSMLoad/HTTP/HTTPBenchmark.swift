import ChildProcesses
import FairPlay
import FairPlayDevice
import Foundation
import KSMOperations
import KSMService
import Licensing
import Logging
import OwnedThreads
import RedisStore
import Wire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The whole license path over HTTP on one host, against the in-process CKC rate on the same cores
/// in the same run: redis-server, `ksm broker` (mock cluster), `ksm serve` workers and `ksm edge`,
/// each a process of the real binary with JSON logs as the deployments run it (swift-log's text
/// handler renders all metadata again whenever a request's logger gains a key), driven by ``HTTPLoadGenerator`` first at saturation (closed
/// loop), then open loop at fractions of the rate it measured, for latency. What `ksm bench http`
/// runs and reports. Readiness comes from machine channels only: the workers' `/status`, the edge's
/// `/readyz`.
package struct HTTPBenchmark {
    /// What a run varies.
    package struct Setup: Sendable {
        package var fixtures = "Fixtures/test-credentials"
        /// The `ksm` binary the children run.
        package var executable: URL
        package var workers = 1
        /// Partitions of the requests topic (the workers share them).
        package var partitions = 12
        /// Requests of the saturation phase, and how many it keeps in flight.
        package var saturationRequests = 8_000
        package var concurrency = 256
        /// Seconds each open-loop latency phase sends for.
        package var latencySeconds = 10.0
        /// Fractions of the saturation rate the latency phases run at.
        package var loads = [0.5, 0.8]
        package var shapes = HTTPLoadShape.allCases
        /// Extra flags for `ksm edge` and for every `ksm serve` (e.g. `--kafka-property linger.ms=5`).
        package var edgeFlags: [String] = []
        package var workerFlags: [String] = []
        /// `fetch.wait.max.ms` of the edge's reply consumer and the workers' job consumer (nil:
        /// their defaults, 10 ms). librdkafka's mock broker holds a fetch that finds no record for
        /// its whole wait, where a real broker answers as soon as a record arrives, so on the mock
        /// every Kafka hop adds up to the wait to a request's latency; a short wait brings the mock
        /// near a real broker, and the extra empty fetches it costs are counted in the CPU figures.
        package var mockFetchWaitMilliseconds: Int? = 2
        /// The workers on CPUs of their own and the edge, the broker, redis-server and the client on
        /// the rest (``CPUPinning``); the in-process baseline then runs on the workers' CPUs. nil:
        /// every process shares every core.
        package var pinning: CPUPinning?
        /// Where the children's logs go; nil: a temporary directory removed afterwards.
        package var logDirectory: URL?
        package var progress: @Sendable (String) -> Void = { _ in }

        package init(executable: URL) { self.executable = executable }

        /// The flags that set ``mockFetchWaitMilliseconds``, given to the edge and every worker
        /// before their own flags (which may override it).
        var fetchWaitFlags: [String] {
            mockFetchWaitMilliseconds.map { ["--kafka-property", "fetch.wait.max.ms=\($0)"] } ?? []
        }
    }

    /// One open-loop phase at a fraction of the saturation rate.
    package struct LatencyPhase: Codable, Sendable {
        package var load: Double
        package var offeredPerSecond: Double
        package var ckcPerSecond: Double
        package var requests: Int
        package var correct: Int
        /// Final answers that were not 200, by HTTP status (504: past the edge's deadline), and
        /// requests with no answer: an overloaded phase shows here, not only in its latency.
        package var errorsByStatus: [String: Int]
        package var lost: Int
        package var p50: Double
        package var p90: Double
        package var p99: Double
        package var max: Double
        /// The goal's p99 bound for this load (ms), and whether the phase met it.
        package var goalP99: Double?
        package var meetsGoal: Bool?
        /// CPU microseconds per request in this phase, all processes (the bench's own crypto
        /// threads excluded), and CPU time over the cores' time: below saturation, smaller batches
        /// cost each request more than at saturation.
        package var cpuMicrosecondsPerRequest: Double
        package var cpuUtilization: Double
        /// Where the wait was, from the processes' own histograms over the phase (bucket bounds, ms:
        /// the quantile is at most this): the edge's arrival to answer for answered requests, and
        /// the workers' job received to reply delivered. Nil when a process did not answer its
        /// scrape, the phase added no observation, or the quantile lies past the last bound (30 s).
        package var edgeP50AtMost: Double?
        package var edgeP99AtMost: Double?
        package var workersP50AtMost: Double?
        package var workersP99AtMost: Double?

        enum CodingKeys: String, CodingKey {
            case load, requests, correct, lost, p50, p90, p99, max
            case edgeP50AtMost = "edge_p50_ms_at_most"
            case edgeP99AtMost = "edge_p99_ms_at_most"
            case workersP50AtMost = "workers_p50_ms_at_most"
            case workersP99AtMost = "workers_p99_ms_at_most"
            case cpuMicrosecondsPerRequest = "cpu_us_per_request"
            case cpuUtilization = "cpu_utilization"
            case errorsByStatus = "errors_by_status"
            case offeredPerSecond = "offered_per_second"
            case ckcPerSecond = "ckc_per_second"
            case goalP99 = "goal_p99_ms"
            case meetsGoal = "meets_goal"
        }
    }

    /// What `ksm bench http` prints.
    package struct Result: Codable, Sendable {
        package var host: String
        package var cores: Int
        package var workers: Int
        package var shapes: [String]
        package var edgeFlags: [String]
        package var workerFlags: [String]
        /// SPC to CKC on the bench's crypto pool, no Kafka, no Redis, no HTTP; the mean of the
        /// measurements before and after the HTTP phases.
        package var inProcessCKCPerSecond: Double
        /// The workers' CPUs and everything else's when pinned (``Setup/pinning``); nil when every
        /// process shared every core.
        package var workerCPUs: [Int]?
        package var harnessCPUs: [Int]?
        /// Correct CKCs per second over HTTP at saturation, and over the in-process rate: over the
        /// whole phase, and steady (``SteadyRate``: without the closed loop's start and drain, which
        /// hold the fleet below capacity for a pipeline's latency at each end). The goal and the
        /// latency phases' rates take the steady figure, the rate the path sustains.
        package var httpCKCPerSecond: Double
        package var ratio: Double
        package var steadyHTTPCKCPerSecond: Double
        package var steadyRatio: Double
        package var saturation: HTTPLoadReport
        package var latency: [LatencyPhase]
        /// CPU microseconds per request by process during the saturation phase (`edge`, `workers`,
        /// `broker`, `redis-server`, and this process's threads: `crypto`, `swift` (the HTTP client),
        /// `kafka-client`), with the edge's and the workers' split by thread.
        package var cpuMicrosecondsPerRequest: [String: Double]
        /// CPU time spent during saturation over the cores' time.
        package var cpuUtilization: Double
        /// The goals (steady ratio ≥ 0.8; p99 < 50 ms at half load and < 100 ms at 0.8), as met or
        /// not; a pinned run's ratio is to the workers' CPUs only, and never meets the ratio goal.
        package var meetsRatioGoal: Bool
        package var allCorrect: Bool

        enum CodingKeys: String, CodingKey {
            case host, cores, workers, shapes, ratio, saturation, latency
            case edgeFlags = "edge_flags"
            case workerFlags = "worker_flags"
            case inProcessCKCPerSecond = "in_process_ckc_per_second"
            case workerCPUs = "worker_cpus"
            case harnessCPUs = "harness_cpus"
            case httpCKCPerSecond = "http_ckc_per_second"
            case steadyHTTPCKCPerSecond = "steady_http_ckc_per_second"
            case steadyRatio = "steady_ratio"
            case cpuMicrosecondsPerRequest = "cpu_us_per_request"
            case cpuUtilization = "cpu_utilization"
            case meetsRatioGoal = "meets_ratio_goal"
            case allCorrect = "all_correct"
        }
    }

    /// The goals the figures are reported against (docs/performance.md); not asserted.
    package static let ratioGoal = 0.8
    package static func p99Goal(load: Double) -> Double? {
        switch load {
        case ...0.5: 50
        case ...0.8: 100
        default: nil
        }
    }

    /// Why the run could not be made.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
        init(_ description: String) { self.description = description }
    }

    package let setup: Setup

    package init(setup: Setup) { self.setup = setup }

    package func run() async throws -> Result {
        let say = setup.progress
        var logger = Logger(label: "ksm.bench.http")
        logger.logLevel = .error
        let test = try TestCredentials(directory: setup.fixtures)
        // Pinned, this process moves to the harness's CPUs first, so every child but the workers
        // (redis-server, the broker, the edge) inherits them.
        if let pinning = setup.pinning {
            try await pinning.pinBench()
            say(
                "workers on CPU \(CPUAffinity.listText(pinning.workerCPUs)); edge, client, broker and Redis on CPU \(CPUAffinity.listText(pinning.harnessCPUs))"
            )
        }
        let directory =
            setup.logDirectory ?? FileManager.default.temporaryDirectory.appendingPathComponent("ksm-bench-http-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { if setup.logDirectory == nil { try? FileManager.default.removeItem(at: directory) } }

        // The store: its own redis-server, the catalogue written with the demo key-encryption key.
        let redis = try await RedisServerProcess()
        defer { redis.stop() }
        let store = RedisLicenseStore(client: try RedisClient(configuration: redis.configuration(poolSize: 2), logger: logger))
        let catalog = DemoCatalog(tenant: "bench", streams: 8, periods: 1)
        try await catalog.provision(store, credentials: test)
        let kekPath = directory.appendingPathComponent("kek.hex").path
        guard
            FileManager.default.createFile(
                atPath: kekPath, contents: Data(HexEncoding.encode(catalog.demoKeyEncryptionKey).utf8), attributes: [.posixPermissions: 0o600])
        else { throw Failure("cannot write \(kekPath)") }
        let credentials = try StormRun.privateCopy(of: setup.fixtures, into: directory.appendingPathComponent("credentials"))

        // Kafka: `ksm broker`, a mock cluster in a process of its own; its first line is the bootstrap.
        // The edge's reply topic is made here with the one partition the edge itself creates on a
        // real cluster: the mock answers no CreateTopics, and its auto-creation gives four, each
        // scanned whole on every fetch (``Setup/partitions``).
        let instanceID = "bench-\(UInt32.random(in: 0...UInt32.max))"
        let topics =
            ["fps.license.requests"]
            + [LicenseJob.Priority.continuity, .new, .prefetch].map { RequestTopics.topic(for: $0, requestsTopic: "fps.license.requests") }
            + ["fps.license.replies", "fps.license.dlq", "\(EdgeConfiguration.defaultReplyTopicPrefix)\(instanceID):1"]
        let broker = try RunningProcess(
            "ksm broker", executable: setup.executable, ["broker", "--partitions", "\(setup.partitions)"] + topics.flatMap { ["--topics", $0] },
            logFile: nil)
        defer { broker.kill() }
        let bootstrap = try await broker.firstLine()
        say("broker at \(bootstrap), redis at \(redis.url.replacingOccurrences(of: #"//[^@]*@"#, with: "//", options: .regularExpression))")

        var workers: [RunningProcess] = []
        defer { for worker in workers { worker.kill() } }
        for index in 0..<max(1, setup.workers) {
            let adminPort = try RedisServerProcess.freeLoopbackPort()
            let arguments =
                [
                    "serve", "--brokers", bootstrap, "--redis-url", redis.url, "--credentials", credentials,
                    "--kek", "\(catalog.keyEncryptionKeyID)=\(kekPath)", "--kafka-property", "session.timeout.ms=6000",
                    "--log-level", "warning", "--log-format", "json", "--admin-port", "\(adminPort)",
                ]
                + setup.fetchWaitFlags + setup.workerFlags
            let command = setup.pinning?.workerCommand(setup.executable, arguments) ?? (executable: setup.executable, arguments: arguments)
            let worker = try RunningProcess(
                "ksm serve \(index)", executable: command.executable, command.arguments, logFile: directory.appendingPathComponent("serve-\(index).log"))
            worker.adminPort = adminPort
            workers.append(worker)
        }
        try await RunningProcess.waitUntilSettled(workers, partitions: setup.partitions)
        for worker in workers { try setup.pinning?.verifyWorker(worker.process.processIdentifier) }
        say("\(workers.count) worker(s) own the \(setup.partitions) partitions")

        let port = try RedisServerProcess.freeLoopbackPort()
        let edge = try RunningProcess(
            "ksm edge", executable: setup.executable,
            [
                "edge", "--listen", "127.0.0.1:\(port)", "--brokers", bootstrap, "--instance-id", instanceID,
                "--deadline", "10", "--log-level", "warning", "--log-format", "json",
            ] + setup.fetchWaitFlags + setup.edgeFlags,
            logFile: directory.appendingPathComponent("edge.log"))
        defer { edge.kill() }
        try await Self.waitUntilReady(edge, port: port)
        say("edge ready on 127.0.0.1:\(port)")
        let url = "http://127.0.0.1:\(port)/fps/\(catalog.tenant)/license"

        // Pinned, the baseline has as many crypto threads as a worker gets, on the workers' CPUs.
        let pool = setup.pinning.map { CryptoPool(threadCount: $0.workerCPUs.count) } ?? CryptoPool()
        defer { pool.shutdown() }
        let server = KeyServerModule(credentials: try CredentialStore(test.credentials))

        func generator(requests: Int, pace: HTTPLoadGenerator.Pace, label: String) async throws -> HTTPLoadGenerator {
            var c = HTTPLoadGenerator.Configuration(urls: [url])
            c.requests = requests
            c.pace = pace
            c.shapes = setup.shapes
            c.connections = setup.concurrency
            c.runID = "\(label)-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
            // A retry would count one request's two attempts as one; a refusal is a figure here.
            c.retries = 0
            return try await HTTPLoadGenerator(configuration: c, catalog: catalog, trust: test.trust, pool: pool)
        }

        // The in-process baseline, on SPCs made like the load's.
        say("making SPCs")
        let baselineSPCs: [[UInt8]] = await pool.map(Array(0..<2_000)) { index in
            let device = SimulatedDevice(trust: test.trust)
            var options = SPCOptions()
            options.assetID = Array(catalog.assetID(stream: index % catalog.streams, period: 0).utf8)
            options.playback = MediaPlaybackInfo(creationDate: 1_790_000_000, state: .readyToPlay, sessionID: UInt64(index + 1))
            return (try? device.makeSPC(options).spc) ?? []
        }
        let baseline = InProcessBaseline(server: server, pool: pool, spcs: baselineSPCs.filter { !$0.isEmpty })
        // Pinned, only the crypto threads move to the workers' CPUs while the baseline runs, and go
        // back after: the client's SPCs and CKCs are the harness's work.
        func measureBaseline() async throws -> Double {
            if let pinning = setup.pinning { try await pinning.pinThreads(named: "ksm-crypto") }
            let rate = await baseline.measure()
            if let pinning = setup.pinning { try await pinning.pinBench() }
            return rate
        }
        await baseline.warmUp()
        let before = try await measureBaseline()
        say("in-process rate \(Int(before)) CKC/s")

        // Warm-up: connections open, the workers' caches filled, librdkafka's batches in their stride.
        let warm = try await generator(requests: 300, pace: .concurrency(min(16, setup.concurrency)), label: "warm").run()
        guard warm.allCorrect else {
            throw Failure("warm-up failed: \(warm.correct)/\(warm.requests) correct, \(warm.errorsByStatus), \(warm.wrong), \(warm.lost) lost")
        }

        let saturationLoad = try await generator(requests: setup.saturationRequests, pace: .concurrency(setup.concurrency), label: "sat")
        say("saturation: \(setup.saturationRequests) requests, \(setup.concurrency) in flight")
        let processes: [String: [Int32]] = [
            "edge": [edge.process.processIdentifier], "workers": workers.map(\.process.processIdentifier),
            "broker": [broker.process.processIdentifier], "redis-server": [redis.processIdentifier].compactMap { $0 },
        ]
        let cpuBefore = CPUAccount.sample(processes: processes, threadSplit: ["edge", "workers"])
        let wallStart = ContinuousClock.now
        let saturation = try await saturationLoad.run()
        let cpu = CPUAccount.sample(processes: processes, threadSplit: ["edge", "workers"]) - cpuBefore
        let wall = (ContinuousClock.now - wallStart).seconds
        say(
            "saturation: \(saturation.steadyCKCPerSecond) CKC/s steady, \(saturation.ckcPerSecond) over the phase, \(saturation.correct)/\(saturation.requests) correct, p99 \(saturation.latencyMilliseconds.p99) ms"
        )

        // The edge's and the workers' own latency histograms, read around each phase; nil for a
        // tier when any of its processes did not answer (``ScrapedHistogram/scrape(port:)``).
        func tierHistograms() async -> (edge: ScrapedHistogram?, workers: ScrapedHistogram?) {
            let edgeHistogram = await ScrapedHistogram.scrape(port: port).map {
                ScrapedHistogram(prometheusText: $0, name: EdgeMetrics.durationName) { $0.contains("outcome=\"answered\"") }
            }
            var workersHistogram: ScrapedHistogram? = ScrapedHistogram()
            for worker in workers {
                guard let adminPort = worker.adminPort, let text = await ScrapedHistogram.scrape(port: adminPort) else {
                    workersHistogram = nil
                    break
                }
                workersHistogram?.add(ScrapedHistogram(prometheusText: text, name: "ksm_job_latency_seconds"))
            }
            return (edgeHistogram, workersHistogram)
        }
        func milliseconds(_ seconds: Double?) -> Double? {
            seconds.flatMap { $0.isFinite ? ($0 * 1e4).rounded() / 10 : nil }
        }

        var phases: [LatencyPhase] = []
        var allCorrect = saturation.allCorrect
        for load in setup.loads {
            let rate = max(1, saturation.steadyCKCPerSecond * load)
            let requests = max(50, Int(rate * setup.latencySeconds))
            let phaseLoad = try await generator(requests: requests, pace: .rate(rate), label: "l\(Int(load * 100))")
            let tiersBefore = await tierHistograms()
            let phaseCPUBefore = CPUAccount.sample(processes: processes, threadSplit: [])
            let phaseStart = ContinuousClock.now
            let phase = try await phaseLoad.run()
            let phaseCPU = (CPUAccount.sample(processes: processes, threadSplit: []) - phaseCPUBefore).seconds
            let phaseWall = (ContinuousClock.now - phaseStart).seconds
            let tiersAfter = await tierHistograms()
            let edgeWait = ScrapedHistogram.phase(before: tiersBefore.edge, after: tiersAfter.edge)
            let workersWait = ScrapedHistogram.phase(before: tiersBefore.workers, after: tiersAfter.workers)
            let phaseCPUSeconds = phaseCPU.filter { $0.key != "crypto" }.values.reduce(0, +)
            allCorrect = allCorrect && phase.allCorrect
            let goal = Self.p99Goal(load: load)
            phases.append(
                LatencyPhase(
                    load: load, offeredPerSecond: rate.rounded(), ckcPerSecond: phase.ckcPerSecond, requests: phase.requests, correct: phase.correct,
                    errorsByStatus: phase.errorsByStatus, lost: phase.lost,
                    p50: phase.latencyMilliseconds.p50, p90: phase.latencyMilliseconds.p90, p99: phase.latencyMilliseconds.p99,
                    max: phase.latencyMilliseconds.max, goalP99: goal, meetsGoal: goal.map { phase.latencyMilliseconds.p99 < $0 },
                    cpuMicrosecondsPerRequest: (phaseCPUSeconds / Double(max(1, phase.requests)) * 1e6).rounded(),
                    cpuUtilization: (phaseCPUSeconds / (phaseWall * Double(ProcessInfo.processInfo.activeProcessorCount)) * 100).rounded() / 100,
                    edgeP50AtMost: milliseconds(edgeWait?.upperBound(quantile: 0.5)), edgeP99AtMost: milliseconds(edgeWait?.upperBound(quantile: 0.99)),
                    workersP50AtMost: milliseconds(workersWait?.upperBound(quantile: 0.5)),
                    workersP99AtMost: milliseconds(workersWait?.upperBound(quantile: 0.99))))
            func bounds(_ p50: Double?, _ p99: Double?) -> String { "\(p50.map { "\($0)" } ?? "-") / \(p99.map { "\($0)" } ?? "-")" }
            say(
                "\(load) load (\(Int(rate)) req/s): p50 \(phase.latencyMilliseconds.p50) ms, p99 \(phase.latencyMilliseconds.p99) ms, \(phase.correct)/\(phase.requests) correct, not 200: \(phase.errorsByStatus), lost \(phase.lost), CPU \(phases.last?.cpuMicrosecondsPerRequest ?? 0) µs per request (\(phaseCPU.sorted { $0.key < $1.key }.map { "\($0.key) \(Int($0.value / Double(max(1, phase.requests)) * 1e6))" }.joined(separator: ", "))), utilisation \(phases.last?.cpuUtilization ?? 0); p50 / p99 at most, ms: edge \(bounds(phases.last?.edgeP50AtMost, phases.last?.edgeP99AtMost)), workers \(bounds(phases.last?.workersP50AtMost, phases.last?.workersP99AtMost))"
            )
        }

        let after = try await measureBaseline()
        let inProcess = (before + after) / 2
        say("in-process rate after: \(Int(after)) CKC/s")
        await edge.terminate(timeout: .seconds(10))
        for worker in workers { await worker.terminate(timeout: .seconds(10)) }

        let ratio = (saturation.ckcPerSecond / inProcess * 1000).rounded() / 1000
        let steadyRatio = (saturation.steadyCKCPerSecond / inProcess * 1000).rounded() / 1000
        let cores = ProcessInfo.processInfo.activeProcessorCount
        return Result(
            host: "\(ProcessInfo.processInfo.hostName), \(cores) cores, \(ProcessInfo.processInfo.physicalMemory >> 30) GiB", cores: cores,
            workers: workers.count, shapes: setup.shapes.map(\.rawValue), edgeFlags: setup.fetchWaitFlags + setup.edgeFlags,
            workerFlags: setup.fetchWaitFlags + setup.workerFlags,
            inProcessCKCPerSecond: inProcess.rounded(), workerCPUs: setup.pinning?.workerCPUs, harnessCPUs: setup.pinning?.harnessCPUs,
            httpCKCPerSecond: saturation.ckcPerSecond, ratio: ratio, steadyHTTPCKCPerSecond: saturation.steadyCKCPerSecond, steadyRatio: steadyRatio,
            saturation: saturation,
            latency: phases, cpuMicrosecondsPerRequest: cpu.microsecondsPerJob(saturation.requests),
            cpuUtilization: (cpu.seconds.values.reduce(0, +) / (wall * Double(cores)) * 100).rounded() / 100,
            meetsRatioGoal: setup.pinning == nil && steadyRatio >= Self.ratioGoal, allCorrect: allCorrect)
    }

    /// Polls the edge's `/readyz` until it answers 200 (producer connected, reply topic assigned).
    static func waitUntilReady(_ edge: RunningProcess, port: Int, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        var last = "no answer"
        while ContinuousClock.now < deadline, edge.isRunning {
            if let url = URL(string: "http://127.0.0.1:\(port)/readyz"),
                let (data, response) = try? await URLSession.shared.data(
                    for: URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 2)),
                let http = response as? HTTPURLResponse
            {
                if http.statusCode == 200 { return }
                last = "\(http.statusCode) \(String(decoding: data, as: UTF8.self))"
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Failure("ksm edge did not become ready (/readyz: \(last)): \(edge.stderr.suffix(2_000))")
    }

    /// The figures as a table for people.
    package static func table(_ r: Result) -> String {
        func yes(_ b: Bool?) -> String { b.map { $0 ? "yes" : "NO" } ?? "-" }
        var lines = [
            "host: \(r.host); \(r.workers) worker(s); shapes \(r.shapes.joined(separator: ","))",
            "edge flags: \(r.edgeFlags.joined(separator: " ")); worker flags: \(r.workerFlags.joined(separator: " "))",
            "",
            "| measure                         | value           | goal        | met |",
            "| ------------------------------- | --------------- | ----------- | --- |",
            "| in-process CKC/s                | \(pad(r.inProcessCKCPerSecond)) |             |     |",
            "| HTTP CKC/s, steady / phase      | \(pad(r.steadyHTTPCKCPerSecond, r.httpCKCPerSecond)) |             |     |",
        ]
        if let workerCPUs = r.workerCPUs {
            // Pinned, the ratio is the workers' CPUs' share of the work, not the whole host's: the
            // goal, on the same cores as everything else, is not what it measures.
            lines.insert(
                "workers on CPU \(CPUAffinity.listText(workerCPUs)); edge, client, broker and Redis on CPU \(CPUAffinity.listText(r.harnessCPUs ?? []))",
                at: 2)
            lines.append("| workers' CPUs' ratio, st. / ph. | \(pad(r.steadyRatio, r.ratio)) | (pinned)    | -   |")
        } else {
            lines.append(
                "| ratio, steady / phase           | \(pad(r.steadyRatio, r.ratio)) | >= 0.8      | \(yes(r.meetsRatioGoal).padding(toLength: 3, withPad: " ", startingAt: 0)) |"
            )
        }
        for p in r.latency {
            let name = "p50 / p99 ms at \(p.load) (\(Int(p.offeredPerSecond))/s)"
            lines.append(
                "| \(name.padding(toLength: 31, withPad: " ", startingAt: 0)) | \("\(p.p50) / \(p.p99)".padding(toLength: 15, withPad: " ", startingAt: 0)) | \((p.goalP99.map { "p99 < \(Int($0))" } ?? "").padding(toLength: 11, withPad: " ", startingAt: 0)) | \(yes(p.meetsGoal).padding(toLength: 3, withPad: " ", startingAt: 0)) |"
            )
        }
        lines.append("")
        let cpu = r.cpuMicrosecondsPerRequest.sorted { $0.key < $1.key }.map { "\($0.key) \(Int($0.value))" }.joined(separator: ", ")
        lines.append("CPU µs per request at saturation: \(cpu); utilisation \(r.cpuUtilization)")
        return lines.joined(separator: "\n")
    }

    private static func pad(_ values: Double...) -> String {
        let text = values.map { x in x == x.rounded() && abs(x) >= 10 ? "\(Int(x))" : "\(x)" }.joined(separator: " / ")
        return text.padding(toLength: 15, withPad: " ", startingAt: 0)
    }
}
