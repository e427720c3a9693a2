import ArgumentParser
import FairPlay
import Foundation
import KSMLoad
import KSMOperations
import KSMService
import Kafka
import Licensing
import Logging
import Prometheus
import ServiceLifecycle

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `ksm demo`: the whole fleet in one process, no external service: librdkafka's mock cluster, an
/// in-memory store behind the same store protocol, two workers, the license edge (`ksm edge`'s
/// service) on a free loopback port, and simulated devices that POST their SPCs to it over HTTP in
/// every request shape, with a key-rotation burst. Exits 0 only if every CKC was right.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract:
            "Run mock Kafka, an in-memory store, two workers and the license edge in one process, and devices asking the edge over HTTP; exit 0 if every CKC was right."
    )

    @OptionGroup var scenario: ScenarioOptions
    @Option(help: "Workers in the demo fleet.")
    var workers = 2
    @Flag(help: "Print the report as JSON only.")
    var json = false
    @Flag(help: "Keep the edge and the workers running after the report, until Ctrl-C, with an SPC to POST with curl.")
    var keepRunning = false

    /// The demo edge's instance ID: its reply topic is `fps.license.replies.edge.demo`.
    static let edgeInstance = "demo"

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: "ksm.demo")
        logger.logLevel = ProcessInfo.processInfo.environment["KSM_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        let quiet = json
        let say: @Sendable (String) -> Void = { line in if !quiet { FileHandle.standardError.write(Data((line + "\n").utf8)) } }

        let port = try EdgeDemoDevices.unusedLoopbackPort()
        var edgeSettings = EdgeConfiguration(host: "127.0.0.1", port: port, brokers: "", instanceID: Self.edgeInstance)
        edgeSettings.logLevel = logger.logLevel

        let cluster = try KafkaMockCluster(brokers: 1, logger: logger)
        for topic in ["fps.license.requests", "fps.license.replies"] { try cluster.createTopic(topic, partitions: 6) }
        try cluster.createTopic("fps.license.dlq", partitions: 1)
        // The edge's reply topic, made here as for the others: the mock cluster has no controller to
        // answer the CreateTopics the edge would send.
        try cluster.createTopic(edgeSettings.replyTopic, partitions: 1)
        edgeSettings.brokers = cluster.bootstrapServers
        say("mock Kafka cluster at \(cluster.bootstrapServers)")

        let test = try TestCredentials(directory: scenario.fixtures)
        let catalog = scenario.catalog
        let store = InMemoryLicenseStore()
        let keyring = try await catalog.provision(store, credentials: test)
        say("in-memory store: tenant \(catalog.tenant), \(catalog.streams) streams x \(catalog.periods) key periods")

        let server = KeyServerModule(credentials: try CredentialStore(test.credentials))
        let pool = CryptoPool()
        let fleet = (0..<max(1, workers)).map { index in
            var worker = WorkerConfiguration(brokers: cluster.bootstrapServers)
            worker.kafkaProperties = ["session.timeout.ms": "6000"]
            var workerLogger = logger
            workerLogger[metadataKey: "worker"] = "\(index)"
            return LicenseWorker(
                configuration: worker, processor: LicenseProcessor(keyServer: server, store: store, keyring: keyring, pool: pool, logger: workerLogger),
                logger: workerLogger)
        }
        say("\(fleet.count) workers in consumer group fps-ksm; \(scenario.viewers) viewers join, then \(scenario.rotations) key rotation(s)")

        var loadConfiguration = LoadGeneratorConfiguration(brokers: cluster.bootstrapServers)
        scenario.apply(to: &loadConfiguration)
        let devices = EdgeDemoDevices(edge: "http://127.0.0.1:\(port)", configuration: loadConfiguration, catalog: catalog, trust: test.trust)

        // The edge as `ksm edge` runs it (EdgeRunner: a job producer, its reply topic's consumer and
        // the HTTP server), a service of the demo's group, last: on shutdown it stops first and
        // answers what is in flight while the workers still run. No Redis, so the account is the
        // X-Account header.
        var edgeLogger = logger
        edgeLogger[metadataKey: "service"] = "edge"
        // The tenant's application certificate, served at /fps/{tenant}/certificate as `ksm edge`
        // serves it from Redis; the devices fetch it before they build an SPC.
        let certificate = test.credentials.first { FairPlayCrypto.sha1($0.certificateDER) == test.trust.certificateHash }?.certificateDER ?? []
        let certificates = EdgeCertificateRoute.fixed([try StoreIdentifier(catalog.tenant): EdgeCertificateRoute.single(certificate)])
        let edge = DemoEdge(settings: edgeSettings, certificates: certificates, logger: edgeLogger)
        say("ksm edge on http://127.0.0.1:\(port): devices POST their SPCs to \(devices.licenseURL) in every request shape")

        let group = ServiceGroup(
            configuration: .init(services: fleet.map { $0 as any Service } + [edge], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        let keepRunning = keepRunning
        let json = json
        let replyTopic = edgeSettings.replyTopic
        let workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-demo-\(ProcessInfo.processInfo.processIdentifier)")
        defer { try? FileManager.default.removeItem(at: workDirectory) }
        let report: LoadReport = try await withThrowingTaskGroup(of: LoadReport?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            tasks.addTask {
                // Let every worker own partitions and the edge be ready before the first request.
                let joined = ContinuousClock.now + .seconds(20)
                while ContinuousClock.now < joined, !fleet.allSatisfy({ $0.statistics.snapshot.assignedPartitions > 0 }) {
                    try await Task.sleep(for: .milliseconds(50))
                }
                try await Self.waitUntilReady("http://127.0.0.1:\(port)/readyz")
                let outcome = try await devices.run(progress: say)
                let shapes = HTTPLoadShape.allCases.map { "\($0.rawValue) \(outcome.shapes[$0.rawValue] ?? 0)" }.joined(separator: ", ")
                var lines = [
                    "certificate:      HTTP GET \(devices.certificateURL), then every SPC built for it",
                    "through the edge: HTTP POST \(devices.licenseURL) (ksm edge, reply topic \(replyTopic))",
                    "request shapes:   \(shapes)",
                ]
                if keepRunning {
                    try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
                    let spc = workDirectory.appendingPathComponent("spc.bin")
                    try Data(try devices.sampleSPC()).write(to: spc)
                    lines += [
                        "try it:           curl --data-binary @\(spc.path) -H 'X-Account: me' \(devices.licenseURL) -o ckc.bin -w '%{http_code}\\n'",
                        "                  curl http://127.0.0.1:\(port)/metrics   (Ctrl-C stops the demo)",
                    ]
                }
                if !json { FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8)) }
                ReportPrinter.print(outcome.report, json: json)
                if !keepRunning { await group.triggerGracefulShutdown() }
                return outcome.report
            }
            var result: LoadReport?
            for try await value in tasks { if let value { result = value } }
            return result ?? LoadReport()
        }
        pool.shutdown()
        let handled = fleet.map { $0.statistics.snapshot.replied }
        say("replies per worker: \(handled.map(String.init).joined(separator: ", "))")
        withExtendedLifetime(cluster) {}
        if !report.allCorrect { throw ExitCode(1) }
    }

    /// Polls the edge's `/readyz` until it answers 200; fails after 20 s.
    static func waitUntilReady(_ url: String) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        guard let address = URL(string: url) else { return }
        while ContinuousClock.now < deadline {
            if let (_, response) = try? await URLSession.shared.data(from: address), (response as? HTTPURLResponse)?.statusCode == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ValidationError("the demo's edge did not become ready on \(url) within 20 s")
    }
}

/// `ksm edge` inside the demo's service group: EdgeRunner's own group, which stops gracefully when
/// the demo's does.
struct DemoEdge: Service {
    let settings: EdgeConfiguration
    let certificates: EdgeCertificateRoute
    let logger: Logger

    func run() async throws {
        try await EdgeRunner.run(settings, certificates: certificates, registry: PrometheusCollectorRegistry(), logger: logger)
    }
}
