import Kafka
import Testing

@testable import KSMService

/// Each client gets the pass-through properties meant for it, so librdkafka warns about none at start-up.
@Suite("Kafka client settings")
struct KafkaClientSettingsTests {
    static let shared = ["security.protocol": "PLAINTEXT", "client.id": "ksm-test", "message.max.bytes": "2000000"]
    static let consumerOnly = [
        "session.timeout.ms": "6000", "heartbeat.interval.ms": "300", "max.poll.interval.ms": "60000", "auto.offset.reset": "earliest",
        "fetch.min.bytes": "1",
    ]
    static let producerOnly = ["enable.idempotence": "true", "compression.type": "lz4", "acks": "all", "message.timeout.ms": "30000"]

    static func settings() -> KafkaClientSettings {
        var configuration = WorkerConfiguration(brokers: "127.0.0.1:1")
        configuration.kafkaProperties = shared.merging(consumerOnly) { $1 }.merging(producerOnly) { $1 }
        configuration.instanceID = "pod-0"
        return KafkaClientSettings(configuration: configuration)
    }

    @Test("the producer gets no consumer-only property, and every shared one")
    func producerPropertiesHoldNoConsumerProperty() {
        let properties = Self.settings().producer { _ in }.properties
        for name in Self.consumerOnly.keys { #expect(properties[name] == nil, "\(name) handed to the producer") }
        #expect(properties["group.instance.id"] == nil)
        for (name, value) in Self.shared { #expect(properties[name] == value) }
        #expect(properties["enable.idempotence"] == "true")
        #expect(properties["linger.ms"] == "1", "the worker's default stays")
    }

    @Test("the consumer gets no producer-only property, and every shared and consumer one")
    func consumerPropertiesHoldNoProducerProperty() {
        let topics = RequestTopics(requestsTopic: "fps.license.requests", classTopics: false)
        let properties = Self.settings().consumer(topics: topics) { _ in }.properties
        for name in Self.producerOnly.keys { #expect(properties[name] == nil, "\(name) handed to the consumer") }
        for (name, value) in Self.shared.merging(Self.consumerOnly, uniquingKeysWith: { $1 }) { #expect(properties[name] == value) }
        #expect(properties["group.instance.id"] == "pod-0")
        #expect(properties["fetch.wait.max.ms"] == "10")
    }

    @Test("librdkafka warns about no property when the worker's two clients start")
    func clientsStartWithoutConfigurationWarnings() async throws {
        let sink = LogSink()
        let settings = Self.settings()
        let topics = RequestTopics(requestsTopic: "fps.license.requests", classTopics: false)
        let producer = try KafkaProducer(configuration: settings.producer { _ in }, logger: sink.logger)
        let consumer = try KafkaConsumer(configuration: settings.consumer(topics: topics) { _ in }, logger: sink.logger)
        // librdkafka checks the configuration in rd_kafka_new, on the creating thread; the wait covers a log line handed on later.
        try await Task.sleep(for: .milliseconds(300))
        await consumer.close(timeout: .seconds(5))
        await producer.close(timeout: .seconds(1))
        let warnings = sink.text.filter { $0.contains("CONFWARN") || $0.contains("will be ignored") }
        #expect(warnings.isEmpty, "\(warnings)")
    }
}
