import Foundation
import KSMOperations
import KSMService
import KSMTestSupport
import Testing

/// `ksm edge`'s settings: flags over the environment over the defaults, `ksm serve`'s variables for
/// the settings both have, every problem named at once, and nothing secret in `--check-config`.
@Suite struct EdgeConfigurationTests {
    @Test func flagsWinOverTheEnvironmentWhichWinsOverDefaults() throws {
        let environment = [
            "KSM_KAFKA_BROKERS": "kafka-0:9092", "KSM_REQUESTS_TOPIC": "fps.requests", "KSM_CLASS_TOPICS": "true",
            "KSM_KAFKA_PROPERTIES": "security.protocol=SASL_SSL;sasl.password=hunter2", "KSM_REDIS_URL": "redis://user:secret@redis:6379/0",
            "KSM_LOG_FORMAT": "json", "KSM_EDGE_DEADLINE": "2.5", "KSM_EDGE_MAX_IN_FLIGHT": "100", "KSM_EDGE_INSTANCE_ID": "edge-env",
        ]
        let settings = try EdgeConfiguration.resolve(
            .init(listen: "[::]:9443", brokers: "kafka-1:9092", kafkaProperties: ["linger.ms=2"], logLevel: "debug", instanceID: "edge-7"),
            environment: environment, hostName: "host")
        #expect(settings.host == "::" && settings.port == 9443)
        #expect(settings.brokers == "kafka-1:9092")
        #expect(settings.requestsTopic == "fps.requests" && settings.classTopics)
        #expect(settings.kafkaProperties == ["security.protocol": "SASL_SSL", "sasl.password": "hunter2", "linger.ms": "2"])
        #expect(settings.redisURL == "redis://user:secret@redis:6379/0")
        #expect(settings.logLevel == .debug && settings.logFormat == .json)
        #expect(settings.deadline == .milliseconds(2_500))
        #expect(settings.maximumInFlight == 100)
        #expect(settings.instanceID == "edge-7")
        #expect(settings.replyTopic == "fps.license.replies.edge.edge-7")
        #expect(settings.requestTopic(for: .continuity) == "fps.requests.continuity")
        let summary = settings.summary
        #expect(!summary.contains("hunter2") && !summary.contains("user:secret"), "\(summary)")
        #expect(summary.contains("sasl.password=<redacted>") && summary.contains("security.protocol=SASL_SSL"))
        #expect(summary.contains("redis-url          = redis://<redacted>@redis:6379/0"))
        #expect(summary.contains("deadline           = 2.5 s"))
        #expect(summary.contains("reply-topic        = fps.license.replies.edge.edge-7"))

        let defaults = try EdgeConfiguration.resolve(.init(brokers: "127.0.0.1:9092"), environment: [:], hostName: "pod-3")
        #expect(defaults.host == "0.0.0.0" && defaults.port == 8080)
        #expect(defaults.requestsTopic == "fps.license.requests" && !defaults.classTopics)
        #expect(defaults.requestTopic(for: .prefetch) == "fps.license.requests")
        #expect(defaults.deadline == .seconds(5))
        #expect(defaults.maximumInFlight == 4_096)
        #expect(defaults.instanceID == "pod-3")
        #expect(defaults.replyTopic == "fps.license.replies.edge.pod-3")
        #expect(defaults.redisURL == nil && defaults.tls == nil)
        #expect(defaults.maximumRequestBytes == 256 * 1_024)
    }

    @Test func everyProblemIsNamedAndNoSecretQuoted() {
        do {
            _ = try EdgeConfiguration.resolve(
                .init(
                    listen: "nowhere", requestsTopic: "bad topic", kafkaProperties: ["hunter2"], redisURL: "http://user:hunter2@redis",
                    logLevel: "loud", logFormat: "xml", deadline: "0", maxInFlight: 0, instanceID: "a/b", maxRequestBytes: 10,
                    tlsCertificate: "/only/one.pem"),
                environment: [:], hostName: "host")
            Issue.record("resolved a configuration full of problems")
        } catch {
            #expect(!error.description.contains("hunter2"), "\(error.description)")
            for source in [
                "--listen", "--brokers", "--requests-topic", "--kafka-property", "--redis-url", "--log-level", "--log-format", "--deadline",
                "--max-in-flight", "--instance-id", "--max-request-bytes",
            ] {
                #expect(error.names(source), "\(source): \(error.problems)")
            }
            #expect(error.problems.contains { $0.message.contains("--tls-certificate is given but no TLS private key") })
        }
    }

    @Test func theInstanceIDMustMakeATopicName() {
        #expect(throws: ServeConfigurationError.self) {
            try EdgeConfiguration.resolve(.init(brokers: "b:9092"), environment: [:], hostName: "")
        }
        #expect(throws: ServeConfigurationError.self) {
            try EdgeConfiguration.resolve(.init(brokers: "b:9092", instanceID: String(repeating: "x", count: 240)), environment: [:], hostName: "h")
        }
    }

    @Test func aSecretKafkaPropertyIsReadFromItsFileAndNeverShown() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-edge-kafka-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let password = GeneratedSecret.password()
        let path = directory.appendingPathComponent("sasl.password").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data((password + "\n").utf8), attributes: [.posixPermissions: 0o600]))

        let environment = ["KSM_KAFKA_PROPERTY_FILES": "sasl.password=\(path)", "KSM_KAFKA_PROPERTIES": "security.protocol=SASL_SSL"]
        let settings = try EdgeConfiguration.resolve(.init(brokers: "b:9092"), environment: environment, hostName: "h")
        #expect(settings.kafkaProperties["sasl.password"] == password)
        #expect(!settings.summary.contains(password))
        #expect(settings.summary.contains("sasl.password=<redacted>"))
        // The same property given inline too is refused, naming the file, never the value.
        do {
            _ = try EdgeConfiguration.resolve(
                .init(brokers: "b:9092", kafkaProperties: ["sasl.password=\(password)"], kafkaPropertyFiles: ["sasl.password=\(path)"]), environment: [:],
                hostName: "h")
            Issue.record("a property given both inline and as a file was accepted")
        } catch {
            #expect("\(error)".contains("--kafka-property-file") && "\(error)".contains(path))
            #expect(!"\(error)".contains(password))
        }
        // A file others may read is refused: it would not be a secret.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        #expect(throws: ServeConfigurationError.self) {
            try EdgeConfiguration.resolve(.init(brokers: "b:9092", kafkaPropertyFiles: ["sasl.password=\(path)"]), environment: [:], hostName: "h")
        }
    }

    @Test func theProducerKeepsConfiguredPropertiesOverItsDefaults() throws {
        let settings = try EdgeConfiguration.resolve(
            .init(brokers: "b:9092", kafkaProperties: ["linger.ms=5"], deadline: "3"), environment: [:], hostName: "h")
        let properties = EdgeRunner.producerProperties(settings)
        #expect(properties["linger.ms"] == "5")
        // The deadline less the delivery margin: an undelivered job fails before the deadline.
        #expect(properties["message.timeout.ms"] == "1500")
        // A short deadline keeps half of itself for the delivery.
        let short = try EdgeConfiguration.resolve(.init(brokers: "b:9092", deadline: "1"), environment: [:], hostName: "h")
        #expect(EdgeRunner.producerProperties(short)["message.timeout.ms"] == "500")
        let configured = try EdgeConfiguration.resolve(
            .init(brokers: "b:9092", kafkaProperties: ["message.timeout.ms=9000"], deadline: "3"), environment: [:], hostName: "h")
        #expect(EdgeRunner.producerProperties(configured)["message.timeout.ms"] == "9000")
    }
}
