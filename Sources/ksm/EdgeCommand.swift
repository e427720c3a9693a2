import ArgumentParser
import Foundation
import KSMOperations
import KSMService
import Logging
import Metrics
import Prometheus

/// `ksm edge`: the players' HTTP door (docs/edge.md). A license request becomes a job on Kafka; the
/// worker's reply, read from this instance's own reply topic, becomes the answer. Stateless, so any
/// number run side by side.
struct EdgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edge",
        abstract: "Run the license edge: POST /fps/{tenant}/license to a Kafka job and back, with /healthz, /readyz and /metrics on the same port."
    )

    @Option(
        help: "HOST:PORT to listen on ([::]:PORT for IPv6). Default: \(EdgeConfiguration.defaultListen). Environment: \(EdgeConfiguration.listenEnvironment)."
    )
    var listen: String?

    @Option(help: "\(ServeSetting.brokers.help) Environment: \(ServeSetting.brokers.environment).")
    var brokers: String?

    @Option(
        help:
            "\(ServeSetting.requestsTopic.help) Default: \(ServeSetting.requestsTopic.defaultText ?? ""). Environment: \(ServeSetting.requestsTopic.environment)."
    )
    var requestsTopic: String?

    @Flag(
        help:
            "Produce each job to its class's topic, <requests-topic>.continuity, .new or .prefetch, as workers with --class-topics read them. Environment: \(ServeSetting.classTopics.environment)."
    )
    var classTopics = false

    @Option(
        name: .customLong("kafka-property"),
        help:
            "librdkafka KEY=VALUE for the producer, the reply consumer and the topic check; repeatable. Environment: \(ServeSetting.kafkaProperties.environment), semicolon-separated."
    )
    var kafkaProperties: [String] = []

    @Option(
        name: .customLong("kafka-property-file"),
        help:
            "librdkafka NAME=PATH whose value is the file's content, read as a secret file (for a SASL password); repeatable. Environment: \(ServeSetting.kafkaPropertyFiles.environment), comma-separated."
    )
    var kafkaPropertyFiles: [String] = []

    @Option(
        help:
            "\(ServeSetting.redisURL.help) Optional: with it the edge checks entitlement tokens and serves certificates; without, the workers check tokens. Environment: \(ServeSetting.redisURL.environment)."
    )
    var redisURL: String?

    @Option(help: "\(ServeSetting.logLevel.help) Default: info. Environment: \(ServeSetting.logLevel.environment).")
    var logLevel: String?

    @Option(help: "\(ServeSetting.logFormat.help) Default: text. Environment: \(ServeSetting.logFormat.environment).")
    var logFormat: String?

    @Option(
        help:
            "Seconds a request waits for its reply before 504 (sent as the job's deadline). Default: 5. Environment: \(EdgeConfiguration.deadlineEnvironment)."
    )
    var deadline: String?

    @Option(
        help:
            "Requests waiting at once; the next is answered 503 at once. Default: \(EdgeConfiguration.defaultMaximumInFlight). Environment: \(EdgeConfiguration.maxInFlightEnvironment)."
    )
    var maxInFlight: Int?

    @Option(
        help:
            "This instance's name, which names its reply topic (<reply-topic-prefix><instance-id>); unique per running edge. Default: the host name. Environment: \(EdgeConfiguration.instanceIDEnvironment)."
    )
    var instanceID: String?

    @Option(
        help:
            "Prefix of this instance's reply topic; keep it inside the workers' allowed reply topics. Default: \(EdgeConfiguration.defaultReplyTopicPrefix). Environment: \(EdgeConfiguration.replyTopicPrefixEnvironment)."
    )
    var replyTopicPrefix: String?

    @Option(
        help:
            "Largest POST body read, in bytes; a larger one is answered 413 unread. Default: \(EdgeConfiguration.defaultMaximumRequestBytes). Environment: \(EdgeConfiguration.maxRequestBytesEnvironment)."
    )
    var maxRequestBytes: Int?

    @Option(help: ArgumentHelp(EdgeConfiguration.tlsNames.certificateHelp, valueName: "path"))
    var tlsCertificate: String?

    @Option(help: ArgumentHelp(EdgeConfiguration.tlsNames.privateKeyHelp, valueName: "path"))
    var tlsPrivateKey: String?

    @Option(
        help:
            "A header the entitlement token may come in besides Authorization: Bearer (e.g. X-DRM-Token). Environment: \(EdgeAdmissionSettings.tokenHeaderEnvironment)."
    )
    var tokenHeader: String?

    @Option(help: "A query parameter the entitlement token may come in (e.g. token). Environment: \(EdgeAdmissionSettings.tokenQueryEnvironment).")
    var tokenQuery: String?

    @Option(
        help:
            "Key-encryption key ID=PATH that opens tenants' token secrets, as for ksm serve; repeatable. Environment: \(ServeSetting.kek.environment) (comma-separated), KSM_KEKS."
    )
    var kek: [String] = []

    @Option(
        help:
            "Requests per client (verified account, else address) as N/s, N/min or N/h, refused 429 beyond it; off by default. Environment: \(EdgeAdmissionSettings.rateLimitEnvironment)."
    )
    var rateLimit: String?

    @Option(
        help: "Requests a client may make at once under --rate-limit. Default: two seconds' worth. Environment: \(EdgeAdmissionSettings.rateBurstEnvironment)."
    )
    var rateBurst: String?

    @Flag(
        help:
            "Take the client's address from the first X-Forwarded-For hop (only behind an ingress that sets it). Environment: \(EdgeAdmissionSettings.trustForwardedForEnvironment)."
    )
    var trustForwardedFor = false

    @Flag(
        help:
            "Resolve the settings (and read the TLS files) without listening or connecting to Kafka, print them with secrets redacted and exit: 0 if usable, 64 naming every problem otherwise."
    )
    var checkConfig = false

    func run() async throws {
        do {
            try await runChecked()
        } catch let failure as CommandFailure {
            throw failure.report(command: "edge")
        }
    }

    private func runChecked() async throws {
        var flags = EdgeConfiguration.Flags(
            listen: listen, brokers: brokers, requestsTopic: requestsTopic, classTopics: classTopics, kafkaProperties: kafkaProperties,
            redisURL: redisURL, logLevel: logLevel, logFormat: logFormat, deadline: deadline, maxInFlight: maxInFlight, instanceID: instanceID,
            replyTopicPrefix: replyTopicPrefix, maxRequestBytes: maxRequestBytes, tlsCertificate: tlsCertificate, tlsPrivateKey: tlsPrivateKey)
        flags.kafkaPropertyFiles = kafkaPropertyFiles
        flags.admission = EdgeAdmissionSettings.Flags(
            tokenHeader: tokenHeader, tokenQuery: tokenQuery, rateLimit: rateLimit, rateBurst: rateBurst, trustForwardedFor: trustForwardedFor, kek: kek)
        let settings: EdgeConfiguration
        do {
            settings = try EdgeConfiguration.resolve(flags, environment: ProcessInfo.processInfo.environment)
        } catch {
            throw CommandFailure.configuration(error.problems.map(\.message))
        }
        var tls: ServerTLS?
        do { tls = try settings.tlsConfiguration() } catch { throw CommandFailure.configuration([error.message]) }
        if checkConfig {
            print(settings.summary)
            print("configuration OK: nothing was connected to; ksm edge would start with these settings")
            return
        }
        switch settings.logFormat {
        case .json: LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
        case .text: LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(DescribedPrometheusFactory(registry: registry))
        var logger = Logger(label: "ksm.edge")
        logger.logLevel = settings.logLevel
        logger.info("license edge starting", metadata: ["version": "\(KSMVersion.current)"])
        do {
            try await EdgeRunner.run(settings, tls: tls, registry: registry, logger: logger)
        } catch {
            throw CommandFailure.runtime(CommandFailure.sentence(for: error))
        }
    }
}
