import Testing

@testable import Kafka

/// `pause` and `resume` answer per partition, as librdkafka does: it sets an error on each partition
/// it refuses and switches the others, so a caller can record exactly what the consumer has.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PauseRefusalTests {
    @Test("a partition librdkafka does not know is refused by name; the others in the same call are paused and resumed")
    func refusedPartitionsAreNamed() async throws {
        try await withCluster { cluster in
            try cluster.createTopic("refusals", partitions: 1)
            let known = TopicPartition(topic: "refusals", partition: 0)
            let unknown = TopicPartition(topic: "never-created", partition: 0)
            let producer = try makeProducer(cluster)
            let consumer = try makeConsumer(cluster, group: "g-refusals", topics: ["refusals"])
            let log = EventLog(consumer)
            try await eventually("assignment") { log.assignedPartitions == [known] }
            _ = try await producer.send(topic: "refusals", key: nil, value: bytes("0"))
            try await eventually("the first message") { log.messages.count == 1 }

            let refusedPause = try consumer.pause([known, unknown])
            #expect(Array(refusedPause.keys) == [unknown])
            #expect(refusedPause[unknown]?.code == KafkaError.Code(name: "_UNKNOWN_PARTITION"))
            for i in 1..<3 { _ = try await producer.send(topic: "refusals", key: nil, value: bytes("\(i)")) }
            try await Task.sleep(for: .milliseconds(800))
            #expect(log.messages.count == 1, "the known partition was paused although its neighbour was refused")

            let refusedResume = try consumer.resume([known, unknown])
            #expect(Array(refusedResume.keys) == [unknown])
            try await eventually("the rest after the resume") { log.messages.count == 3 }
            #expect(try consumer.resume([known]).isEmpty, "nothing refused")
            await consumer.close()
            await producer.close()
        }
    }

    @Test("a closed consumer's pause throws: nothing was paused")
    func closedConsumerThrows() async throws {
        try await withCluster { cluster in
            try cluster.createTopic("closing", partitions: 1)
            let consumer = try makeConsumer(cluster, group: "g-closing", topics: ["closing"])
            await consumer.close()
            #expect(throws: KafkaError.self) { try consumer.pause([TopicPartition(topic: "closing", partition: 0)]) }
        }
    }
}

extension PauseRefusalTests {
    @Test("a pause librdkafka refused is not kept as the user's: a later backpressure resume includes the partition")
    func refusedPauseIsForgotten() {
        let p0 = TopicPartition(topic: "t", partition: 0)
        let p1 = TopicPartition(topic: "t", partition: 1)
        var m = ConsumerStateMachine(capacity: 2)
        _ = m.partitionsAssigned([p0], incremental: true)
        _ = m.pauseRequested([p0, p1])
        m.pauseRefused([p1])
        #expect(m.userPaused == [p0])
        // p1 is assigned later; backpressure holds and releases the whole assignment.
        _ = m.partitionsAssigned([p1], incremental: true)
        for offset in 0..<2 { _ = m.enqueue(.message(KafkaMessage(topic: "t", partition: 1, offset: Int64(offset), key: nil, value: [], headers: []))) }
        #expect(m.applyBackpressure() != .unchanged)
        _ = m.takeMore(limit: 2)
        #expect(m.applyBackpressure() == .resume([p1]), "only the user's own pause stays")
    }
}
