import Synchronization
import Testing

@testable import Kafka

/// The assigned consumer on the in-process mock cluster: it reads every partition from the end it
/// was placed at, nothing produced before, and no group ever holds an offset for it.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct KafkaAssignedConsumerTests {
    @Test func readsOnlyWhatIsProducedAfterItWasPlacedAtTheEnd() async throws {
        try await withCluster { cluster in
            try cluster.createTopic("replies.edge-1", partitions: 3)
            let producer = try makeProducer(cluster)
            for i in 0..<9 { _ = try await producer.send(topic: "replies.edge-1", key: bytes("k\(i)"), value: bytes("old-\(i)")) }

            let received = Mutex<[String]>([])
            var settings = KafkaAssignedConsumer.Configuration(bootstrapServers: cluster.bootstrapServers, topic: "replies.edge-1")
            settings.properties = ["fetch.wait.max.ms": "10"]
            let consumer = try KafkaAssignedConsumer(configuration: settings, logger: testLogger) { message in
                received.withLock { $0.append(text(message.value) ?? "") }
            }
            let ends = try await consumer.assignAtEnd()
            #expect(ends.count == 3)
            #expect(ends.values.reduce(0, +) == 9)

            for i in 0..<6 {
                _ = try await producer.send(
                    topic: "replies.edge-1", key: bytes("k\(i)"), value: bytes("new-\(i)"), headers: [("correlation-id", bytes("c\(i)"))])
            }
            try await eventually("6 new records") { received.withLock { $0.count } >= 6 }
            try await Task.sleep(for: .milliseconds(200))
            #expect(received.withLock { $0.sorted() } == (0..<6).map { "new-\($0)" })
            await consumer.close()
            await consumer.close()
            await producer.close()
        }
    }
}
