import Foundation
import KSMTestSupport
import Kafka
import OwnedThreads
import Synchronization
import Testing

/// A mock broker set down and up while this process spawns children: librdkafka 2.0.2 re-binds the
/// broker's port on the way down and aborts the process if the bind fails, which a spawning child's
/// copy of the listener makes it do. `KafkaMockCluster` waits for spawns itself (`SpawnGate`), so no
/// caller (a test, `BrokerControl`) can forget to.
@Suite(.timeLimit(.minutes(2))) struct MockBrokerSpawnTests {
    /// What the spawners and the broker's thread share.
    final class Progress: Sendable {
        let spawned = Atomic<Int>(0)
        let cycling = Atomic<Bool>(true)
        /// Set when the spawners end, however they end, so the broker's thread never outlives the test.
        let spawnersEnded = Atomic<Bool>(false)
    }

    @Test("a broker set down and up over and over while children are spawned never aborts the process, and comes back each time")
    func brokerDownAndUpBesideSpawns() async throws {
        try await withCluster(brokers: 1) { cluster in
            try cluster.createTopic("spawns", partitions: 1)
            let producer = try makeProducer(cluster)
            _ = try await producer.send(topic: "spawns", key: nil, value: bytes("before"))
            let progress = Progress()
            // Down and up block; they run on a thread of their own so the spawns (which await on the
            // cooperative pool) keep going on a loaded host. Two spawners keep a child between clone
            // and exec most of the time: with the gate taken out of `setBrokerDown`, this aborted the
            // process in 4 of 5 runs here.
            let cycler = Task {
                await OwnedThread.run(name: "broker-cycles") { () -> Result<Int, KafkaError> in
                    defer { progress.cycling.store(false, ordering: .relaxed) }
                    let deadline = ContinuousClock.now + .seconds(60)
                    var cycles = 0
                    while cycles < 30 || progress.spawned.load(ordering: .relaxed) < 60, ContinuousClock.now < deadline,
                        !progress.spawnersEnded.load(ordering: .relaxed)
                    {
                        do throws(KafkaError) {
                            try cluster.setBrokerDown(1)
                            try cluster.setBrokerUp(1)
                        } catch {
                            return .failure(error)
                        }
                        cycles += 1
                    }
                    return .success(cycles)
                }
            }
            defer { progress.spawnersEnded.store(true, ordering: .relaxed) }
            try await withThrowingTaskGroup { group in
                for _ in 0..<2 {
                    group.addTask {
                        while progress.cycling.load(ordering: .relaxed) {
                            let output = try await ProcessRunner.run(URL(fileURLWithPath: "/bin/true"), [], timeout: .seconds(30))
                            #expect(output.status == 0)
                            progress.spawned.add(1, ordering: .relaxed)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let cycles = try await cycler.value.get()
            let spawned = progress.spawned.load(ordering: .relaxed)
            #expect(cycles >= 30 && spawned >= 60, "within 60 s the broker went down and up \(cycles) times beside \(spawned) spawns")
            let report = try await producer.send(topic: "spawns", key: nil, value: bytes("after"))
            #expect(report.offset == 1)
            await producer.close()
        }
    }
}
