import KSMLoad
import Kafka
import Testing

/// `BrokerControl`'s emulated controller against an in-process mock cluster: what librdkafka's mock
/// does with a broker set down, and that `failover` is what makes its partitions writable again.
@Suite(.serialized, .timeLimit(.minutes(1))) struct BrokerControlFailoverTests {
    /// Records with keys spread over every partition, one per key.
    static func records(_ topic: String, _ round: String) -> [KafkaProducer.Record] {
        (0..<36).map { KafkaProducer.Record(topic: topic, key: Array("\(round)-\($0)".utf8), value: Array("v".utf8)) }
    }

    @Test("A broker set down keeps its partitions (writes to them time out); after failover they are written on a survivor")
    func downAloneStrandsPartitionsAndFailoverMovesThem() async throws {
        let cluster = try KafkaMockCluster(brokers: 3)
        let control = BrokerControl(cluster: cluster, layout: ClusterLayout(brokers: 3))
        try cluster.createTopic("t", partitions: 6, replicationFactor: 3)
        try control.place(topic: "t", partitions: 6)
        let stranded = Set(control.layout.partitions(ledBy: 2).map(\.partition))
        #expect(stranded == [1, 4])
        var configuration = KafkaProducer.Configuration(bootstrapServers: cluster.bootstrapServers)
        // Long enough for a fresh cluster's first metadata on a loaded CI host (1 s was not, once in
        // a full run); the stranded writes of the down phase wait this long before they fail.
        configuration.properties = ["linger.ms": "1", "message.timeout.ms": "5000"]
        let producer = try KafkaProducer(configuration: configuration)

        let before = await producer.send(Self.records("t", "before"))
        #expect(before.allSatisfy { (try? $0.get()) != nil }, "\(before)")

        try control.apply(.brokerDown(2))
        let down = await producer.send(Self.records("t", "down"))
        let delivered = down.compactMap { try? $0.get().partition }
        #expect(!delivered.contains { stranded.contains($0) }, "written to a dead broker's partition: \(delivered)")
        #expect(delivered.count < down.count, "every record was delivered with its leader down")

        #expect(throws: BrokerControl.ApplyError.self) { try control.apply(.failover(1)) }
        try control.apply(.failover(2))
        #expect(control.layout.partitions(ledBy: 2).isEmpty)
        let after = await producer.send(Self.records("t", "after"))
        let partitions = Set(after.compactMap { try? $0.get().partition })
        #expect(after.allSatisfy { (try? $0.get()) != nil }, "\(after)")
        #expect(stranded.isSubset(of: partitions), "no record reached the moved partitions: \(partitions)")
        await producer.close()
    }
}
