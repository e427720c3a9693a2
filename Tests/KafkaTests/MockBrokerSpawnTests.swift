import Foundation
import Kafka
import KSMTestSupport
import Synchronization
import Testing

/// A mock broker set down and up while this process spawns children: librdkafka 2.0.2 re-binds the
/// broker's port on the way down and aborts the process if the bind fails, which a spawning child's
/// copy of the listener makes it do. `KafkaMockCluster` waits for spawns itself (`SpawnGate`), so no
/// caller (a test, `BrokerControl`) can forget to.
@Suite(.timeLimit(.minutes(2))) struct MockBrokerSpawnTests {
    @Test("a broker set down and up over and over while children are spawned never aborts the process, and comes back each time")
    func brokerDownAndUpBesideSpawns() async throws {
        try await withCluster(brokers: 1) { cluster in
            try cluster.createTopic("spawns", partitions: 1)
            let producer = try makeProducer(cluster)
            _ = try await producer.send(topic: "spawns", key: nil, value: bytes("before"))
            let cycling = Atomic<Bool>(true)
            let spawner = Task {
                var spawned = 0
                while cycling.load(ordering: .relaxed) {
                    let output = try await ProcessRunner.run(URL(fileURLWithPath: "/bin/true"), [], timeout: .seconds(30))
                    #expect(output.status == 0)
                    spawned += 1
                }
                return spawned
            }
            // Without the gate in `setBrokerDown`, this aborted the process in each of seven runs here.
            let deadline = ContinuousClock.now + .seconds(8)
            var cycles = 0
            while cycles < 200, ContinuousClock.now < deadline {
                try cluster.setBrokerDown(1)
                try cluster.setBrokerUp(1)
                cycles += 1
            }
            cycling.store(false, ordering: .relaxed)
            let spawned = try await spawner.value
            #expect(spawned > 0, "no child was spawned while the broker went down and up")
            #expect(cycles >= 10, "the broker went down and up only \(cycles) times")
            let report = try await producer.send(topic: "spawns", key: nil, value: bytes("after"))
            #expect(report.offset == 1)
            await producer.close()
        }
    }
}
