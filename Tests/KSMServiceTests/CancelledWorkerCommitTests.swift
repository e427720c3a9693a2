import Kafka
import Licensing
import Logging
import Testing

@testable import KSMService

/// A worker whose run is cancelled (a `ServiceGroup` cancels every service when one fails) still
/// makes its final commit within the shutdown budget: the jobs it answered are not answered again by
/// the partition's next owner.
@Suite(.timeLimit(.minutes(10)))
struct CancelledWorkerCommitTests {
    @Test("a cancelled worker commits the offsets of every job it answered before it stops")
    func cancelledRunCommitsAnsweredJobs() async throws {
        var logger = Logger(label: "cancelled-worker-test")
        logger.logLevel = .critical
        let world = try World()
        let cluster = try KafkaMockCluster(brokers: 1, logger: logger)
        var configuration = WorkerConfiguration(brokers: cluster.bootstrapServers)
        configuration.groupID = "g-cancelled"
        configuration.requestsTopic = "cancelled.requests"
        configuration.repliesTopic = "cancelled.replies"
        configuration.deadLetterTopic = "cancelled.dlq"
        // No auto-commit in the test's time: only the final commit can commit the answered jobs.
        configuration.commitInterval = .seconds(3_600)
        // Far more than the final commit needs, so a crowded host's scheduling delays cannot use it up.
        configuration.shutdownTimeout = .seconds(300)
        configuration.kafkaProperties = ["session.timeout.ms": "6000", "heartbeat.interval.ms": "100", "fetch.wait.max.ms": "20"]
        for topic in [configuration.requestsTopic, configuration.repliesTopic, configuration.deadLetterTopic] {
            try cluster.createTopic(topic, partitions: 1)
        }
        let processor = LicenseProcessor(
            keyServer: try world.keyServer(), store: InMemoryLicenseStore(), keyring: world.keyring, pool: sharedPool, logger: logger)
        let worker = LicenseWorker(configuration: configuration, processor: processor, logger: logger)
        let run = Task { try await worker.run() }

        var producerConfiguration = KafkaProducer.Configuration(bootstrapServers: cluster.bootstrapServers)
        producerConfiguration.properties = ["linger.ms": "1"]
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
        // Jobs the worker answers at once, with a refusal: a job it cannot read is answered too.
        let jobs = 12
        for index in 0..<jobs {
            _ = try await producer.send(topic: configuration.requestsTopic, key: nil, value: Array(#"{"id":"cancelled-\#(index)"}"#.utf8))
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while worker.statistics.snapshot.replied + worker.statistics.snapshot.deadLettered < jobs, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let snapshot = worker.statistics.snapshot
        #expect(snapshot.replied + snapshot.deadLettered == jobs, "answered \(snapshot.replied), dead-lettered \(snapshot.deadLettered)")

        run.cancel()
        _ = try? await run.value
        // The final commit succeeded inside the run. An attempt that timed out on a crowded host and
        // was retried is fine: only the end of the final commit counts.
        #expect(worker.statistics.snapshot.finalCommitSucceeded == true)
        await producer.close()
        let offsets = try await KafkaAdmin.committedOffsets(
            bootstrap: cluster.bootstrapServers, group: configuration.groupID, topic: configuration.requestsTopic, partitions: 1)
        #expect(offsets.first?.committed == Int64(jobs), "committed \(offsets.map(\.committed)) of \(jobs) answered jobs")
    }
}
