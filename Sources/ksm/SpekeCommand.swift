import ArgumentParser
import Foundation
import KSMOperations
import KSMService
import Logging
import Metrics
import Prometheus

/// `ksm speke`: the SPEKE v2 key provider packagers (AWS Elemental MediaPackage, MediaConvert, ...)
/// ask for content keys (docs/speke.md). Stateless, talking only to Redis, so it scales out freely.
struct SpekeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "speke",
        abstract: "Run the SPEKE v2 key provider: POST /speke/v2/{tenant}/copyProtection, with /healthz, /readyz and /metrics on the same port."
    )

    @Option(
        help: "HOST:PORT to listen on ([::]:PORT for IPv6). Default: \(SpekeConfiguration.defaultListen). Environment: \(SpekeConfiguration.listenEnvironment)."
    )
    var listen: String?

    @Option(help: "\(ServeSetting.redisURL.help) Environment: \(ServeSetting.redisURL.environment).")
    var redisURL: String?

    @Option(
        help:
            "Key-encryption key ID=PATH (hex or raw 16/32 bytes), as for ksm serve; repeatable. Environment: \(ServeSetting.kek.environment) (comma-separated), KSM_KEKS."
    )
    var kek: [String] = []

    @Option(help: "\(ServeSetting.logLevel.help) Default: info. Environment: \(ServeSetting.logLevel.environment).")
    var logLevel: String?

    @Option(help: "\(ServeSetting.logFormat.help) Default: text. Environment: \(ServeSetting.logFormat.environment).")
    var logFormat: String?

    @Option(
        help:
            "Largest POST body read, in bytes; a larger one is answered 413 unread. Default: \(SpekeConfiguration.defaultMaximumRequestBytes). Environment: \(SpekeConfiguration.maxRequestBytesEnvironment)."
    )
    var maxRequestBytes: Int?

    @Option(help: ArgumentHelp(SpekeConfiguration.tlsNames.certificateHelp, valueName: "path"))
    var tlsCertificate: String?

    @Option(help: ArgumentHelp(SpekeConfiguration.tlsNames.privateKeyHelp, valueName: "path"))
    var tlsPrivateKey: String?

    @Flag(
        help:
            "Resolve the settings and read the key files (and the TLS files) without listening or connecting to Redis, print them with secrets redacted and exit: 0 if usable, 64 naming every problem otherwise."
    )
    var checkConfig = false

    func run() async throws {
        do {
            try await runChecked()
        } catch let failure as CommandFailure {
            throw failure.report(command: "speke")
        }
    }

    private func runChecked() async throws {
        let flags = SpekeConfiguration.Flags(
            listen: listen, redisURL: redisURL, kek: kek, logLevel: logLevel, logFormat: logFormat, maxRequestBytes: maxRequestBytes,
            tlsCertificate: tlsCertificate, tlsPrivateKey: tlsPrivateKey)
        let settings: SpekeConfiguration
        do {
            settings = try SpekeConfiguration.resolve(flags, environment: ProcessInfo.processInfo.environment)
        } catch {
            throw CommandFailure.configuration(error.problems.map(\.message))
        }
        // Read here, before logging starts, and in --check-config too: a TLS file that cannot be
        // used is a configuration mistake (64) that names the setting, not a failure at run time.
        var problems: [String] = []
        var tls: ServerTLS?
        do { tls = try settings.tlsConfiguration() } catch { problems.append(error.message) }
        if checkConfig {
            do { _ = try settings.keyring() } catch { problems.append(CommandFailure.sentence(for: error)) }
            guard problems.isEmpty else { throw CommandFailure.configuration(problems) }
            print(settings.summary)
            print("configuration OK: nothing was connected to; ksm speke would start with these settings")
            return
        }
        guard problems.isEmpty else { throw CommandFailure.configuration(problems) }
        switch settings.logFormat {
        case .json: LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
        case .text: LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(DescribedPrometheusFactory(registry: registry))
        var logger = Logger(label: "ksm.speke")
        logger.logLevel = settings.logLevel
        logger.info("SPEKE key provider starting", metadata: ["version": "\(KSMVersion.current)"])
        do {
            try await SpekeRunner.run(settings, tls: tls, registry: registry, logger: logger)
        } catch {
            throw CommandFailure.runtime(CommandFailure.sentence(for: error))
        }
    }
}
