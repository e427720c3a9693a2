import Kafka
import Testing

/// Arguments librdkafka 2.0.2's mock would take and then abort on (or index memory with) are refused
/// before they reach it.
@Suite(.timeLimit(.minutes(1))) struct MockClusterArgumentTests {
    @Test("an unknown coordinator or leader broker and a negative partition are refused as invalid arguments; known ones are taken")
    func unknownBrokersAndNegativePartitionsRefused() throws {
        let cluster = try KafkaMockCluster(brokers: 3)
        try cluster.createTopic("t", partitions: 2, replicationFactor: 3)
        for broker: Int32 in [0, 4, -1] {
            let error = #expect(throws: KafkaError.self) { try cluster.setGroupCoordinator(group: "g", brokerID: broker) }
            #expect(error?.code == .invalidArgument)
        }
        // An unknown leader librdkafka refuses itself (another code); refused here first all the same.
        for (partition, broker): (Int32, Int32) in [(-1, 1), (0, 4), (1, 0)] {
            let error = #expect(throws: KafkaError.self) { try cluster.setPartitionLeader(topic: "t", partition: partition, brokerID: broker) }
            #expect(error?.code == .invalidArgument)
        }
        try cluster.setGroupCoordinator(group: "g", brokerID: 3)
        try cluster.setPartitionLeader(topic: "t", partition: 1, brokerID: 2)
        try cluster.setPartitionLeader(topic: "t", partition: 0, brokerID: -1)
    }
}
