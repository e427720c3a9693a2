import ArgumentParser
import Foundation
import KSMOperations
import KSMService
import Logging
import Metrics
import Prometheus

/// `ksm serve`: one KSM worker of the fleet. Configuration from a JSON file, then environment
/// variables, then flags (each overrides the one before).
///
/// The settings' flags are not declared here: each is declared once, with its environment variable,
/// config-file key, default, bounds and help, in ``ServeSetting``. This command captures them and
/// the resolver reads them against that table, and `--help` lists them from it.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run a KSM worker: consume license jobs from Kafka, answer them with Redis and publish CKCs.",
        discussion: ServeSetting.helpText()
    )

    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp("Settings as --flag VALUE pairs and switches, listed under SETTINGS above.", valueName: "setting"))
    var arguments: [String] = []

    @Flag(
        help:
            "Resolve the configuration (flags, environment, config file; key files and credentials are read) without connecting to Kafka or Redis, print it with secrets redacted and exit: 0 if it is usable, 64 naming every problem otherwise."
    )
    var checkConfig = false

    func run() async throws {
        do {
            try await runChecked()
        } catch let failure as CommandFailure {
            throw failure.report(command: "serve")
        }
    }

    private func runChecked() async throws {
        let settings: ServeConfiguration
        do {
            settings = try ServeConfiguration.resolve(
                arguments: arguments, environment: ProcessInfo.processInfo.environment, defaultInstanceID: Self.defaultInstanceID())
        } catch {
            throw CommandFailure.configuration(error.problems.map(\.message))
        }
        if checkConfig {
            try Self.check(settings)
            return
        }
        do {
            try await serve(settings)
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure.runtime(CommandFailure.sentence(for: error))
        }
    }

    /// `--check-config`: what `ksm serve` would run with, and the files it would read.
    static func check(_ settings: ServeConfiguration) throws {
        var problems: [String] = []
        do { _ = try settings.keyring() } catch { problems.append(CommandFailure.sentence(for: error)) }
        do {
            _ = try ServeRunner.keyServer(for: settings)
        } catch {
            problems.append(CommandFailure.sentence(for: error))
        }
        guard problems.isEmpty else { throw CommandFailure.configuration(problems) }
        print(settings.summary)
        print("configuration OK: nothing was connected to; ksm serve would start with these settings")
    }

    /// `host-pid`: unique per running worker when no static-membership instance ID names it.
    static func defaultInstanceID() -> String {
        "\(ProcessInfo.processInfo.hostName)-\(getpid())"
    }

    private func serve(_ settings: ServeConfiguration) async throws {
        switch settings.logFormat {
        case .json: LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
        case .text: LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        }
        // swift-metrics -> Prometheus text on /metrics; an embedder bootstraps its own backend instead.
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(DescribedPrometheusFactory(registry: registry))
        var logger = Logger(label: "ksm.worker")
        logger.logLevel = settings.logLevel
        logger.info("worker process starting", metadata: ["allocator": "\(Allocator.description)", "version": "\(KSMVersion.current)"])

        try await ServeRunner.run(settings, registry: registry, logger: logger)
    }
}
