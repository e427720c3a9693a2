import Kafka
import Logging
import Synchronization
import Testing

@testable import KSMService

extension FetchSwitchRetryTests {
    @Test("against librdkafka's mock cluster: classes paused at the in-flight limit resume and deliver what waited, though the resume failed twice")
    func pausedClassResumesAndDelivers() async throws {
        var logger = Logger(label: "fetch-switch-test")
        logger.logLevel = .warning
        let cluster = try KafkaMockCluster(brokers: 1, logger: logger)
        let topics = RequestTopics(requestsTopic: "fetch-retry", classTopics: true)
        for topic in topics.all { try cluster.createTopic(topic, partitions: 1) }
        var configuration = KafkaConsumer.Configuration(bootstrapServers: cluster.bootstrapServers, groupID: "g-fetch-retry", topics: topics.all)
        // librdkafka reacting in tens of milliseconds against the in-process cluster.
        configuration.properties = [
            "session.timeout.ms": "6000", "heartbeat.interval.ms": "100", "fetch.wait.max.ms": "20",
            "fetch.error.backoff.ms": "50", "topic.metadata.refresh.interval.ms": "500",
        ]
        let consumer = try KafkaConsumer(configuration: configuration, logger: logger)
        var producerConfiguration = KafkaProducer.Configuration(bootstrapServers: cluster.bootstrapServers)
        producerConfiguration.properties = ["linger.ms": "1"]
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)

        let flaky = FlakyConsumer(wrapping: consumer)
        let statistics = WorkerStatistics()
        let state = WorkerState(
            maximumInFlight: 4, statistics: statistics, topics: topics, maximumBatchSize: 4, logger: logger,
            switchFetching: { ClassFetchControl.apply($0, to: flaky, topics: topics) })
        // What the worker's read loop does with the events, and its tick beside it.
        let received = Mutex<[KafkaMessage]>([])
        let reader = Task {
            for await events in consumer.eventBatches(limit: 64) {
                for event in events {
                    switch event {
                    case .message(let message):
                        received.withLock { $0.append(message) }
                        await state.enqueue([message])
                    case .assigned(let partitions): _ = await state.assigned(partitions)
                    case .revoked(let partitions): await state.revoke(partitions)
                    case .error: break
                    }
                }
            }
        }
        let ticks = Task { await state.keepFetchSwitchesMade(every: .milliseconds(20)) }
        let continuity = RequestTopics.topic(for: .continuity, requestsTopic: topics.requests)
        let all = Set(topics.fetchClasses)
        try await eventually("the assignment") { ((try? consumer.assignment()) ?? []).count == topics.all.count }

        for _ in 0..<4 { _ = try await producer.send(topic: continuity, key: nil, value: Array("{}".utf8)) }
        try await eventually("four jobs in flight and every class paused") {
            received.withLock { $0.count } == 4 && flaky.paused.count == topics.all.count
        }
        #expect(await state.pausedFetchClasses == all)
        for _ in 4..<7 { _ = try await producer.send(topic: continuity, key: nil, value: Array("{}".utf8)) }
        try await Task.sleep(for: .milliseconds(800))
        #expect(received.withLock { $0.count } == 4, "librdkafka fetched a paused class")

        // The jobs are answered; from here no message arrives and no batch settles, and the first two
        // resumes fail: only the tick can make it.
        flaky.fail(.resume, times: 2)
        let batch = await state.nextBatch(limit: 4) ?? []
        await state.processed(jobs: batch.count, in: .milliseconds(1))
        await state.finished(batch.map(\.message), settled: batch.count)
        try await eventually("the three jobs that waited on the broker") { received.withLock { $0.count } == 7 }
        #expect(received.withLock { $0.map(\.offset) } == Array(0..<7))
        #expect(await state.pausedFetchClasses.isEmpty)
        #expect(await state.pendingFetchSwitches.isEmpty)
        let failures = statistics.snapshot.fetchSwitchFailures
        #expect(failures[WorkerStatistics.FetchSwitchKey(fetchClass: "continuity", action: "resume")] == 2, "\(failures)")

        ticks.cancel()
        await ticks.value
        await consumer.close()
        await reader.value
        await producer.close()
    }
}
