import ArgumentParser
import FairPlay
import Foundation
import KSMLoad
import KSMService
import Kafka
import Licensing
import Logging
import ServiceLifecycle

/// `ksm demo`: the whole fleet in one process, no external service: librdkafka's mock cluster, an
/// in-memory store behind the same store protocol, two workers, and the load generator with a
/// key-rotation burst. Exits 0 only if every reply was correct.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run mock Kafka, an in-memory store, two workers and a load generator in one process; exit 0 if every CKC was right."
    )

    @OptionGroup var scenario: ScenarioOptions
    @Option(help: "Workers in the demo fleet.")
    var workers = 2
    @Flag(help: "Print the report as JSON only.")
    var json = false

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: "ksm.demo")
        logger.logLevel = ProcessInfo.processInfo.environment["KSM_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        let quiet = json
        let say: @Sendable (String) -> Void = { line in if !quiet { FileHandle.standardError.write(Data((line + "\n").utf8)) } }

        let cluster = try KafkaMockCluster(brokers: 1, logger: logger)
        for topic in ["fps.license.requests", "fps.license.replies"] { try cluster.createTopic(topic, partitions: 6) }
        try cluster.createTopic("fps.license.dlq", partitions: 1)
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
        let generator = LoadGenerator(configuration: loadConfiguration, catalog: catalog, trust: test.trust, logger: logger)

        let group = ServiceGroup(configuration: .init(services: fleet.map { $0 as any Service }, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        let report: LoadReport = try await withThrowingTaskGroup(of: LoadReport?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            tasks.addTask {
                // Let every worker own partitions before the first job goes out.
                let joined = ContinuousClock.now + .seconds(20)
                while ContinuousClock.now < joined, !fleet.allSatisfy({ $0.statistics.snapshot.assignedPartitions > 0 }) {
                    try await Task.sleep(for: .milliseconds(50))
                }
                let report = try await generator.run(progress: say)
                await group.triggerGracefulShutdown()
                return report
            }
            var result: LoadReport?
            for try await value in tasks { if let value { result = value } }
            return result ?? LoadReport()
        }
        pool.shutdown()
        let handled = fleet.map { $0.statistics.snapshot.replied }
        say("replies per worker: \(handled.map(String.init).joined(separator: ", "))")
        ReportPrinter.print(report, json: json)
        withExtendedLifetime(cluster) {}
        if !report.allCorrect { throw ExitCode(1) }
    }
}
