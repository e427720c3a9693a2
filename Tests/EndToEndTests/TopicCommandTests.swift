import Foundation
import KSMLoad
import KSMTestSupport
import Kafka
import Testing

/// `ksm admin create-topics`, the topics Job's command, against `ksm broker` (librdkafka's mock
/// cluster). librdkafka 2.0.2's mock answers no CreateTopics request, so creating a topic is seen
/// here only as the clear failure it is against such a broker; the rest (finding the topics,
/// judging their partitions, reading the workers' settings) runs as against a real cluster.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct TopicCommandTests {
    static func output(_ result: KSMBinary.Result) -> (stdout: String, stderr: String) {
        (String(decoding: result.stdout, as: UTF8.self), String(decoding: result.stderr, as: UTF8.self))
    }

    @Test("With every topic there, it reports each with its partitions and exits 0, reading the names as ksm serve does")
    func existingTopicsPass() async throws {
        let broker = try RunningProcess("broker", ["broker"], controlInput: true)
        let bootstrap = try await broker.firstLine()
        let environment = ["KSM_KAFKA_BROKERS": bootstrap, "KSM_CLASS_TOPICS": "true", "KSM_REQUESTS_TOPIC": "fps.license.requests"]
        let result = try await KSMBinary.run(["admin", "create-topics", "--replication-factor", "1", "--timeout", "20"], environment: environment)
        let (stdout, stderr) = Self.output(result)
        #expect(result.status == 0, "\(stderr)")
        for topic in [
            "fps.license.requests", "fps.license.requests.continuity", "fps.license.requests.new", "fps.license.requests.prefetch",
            "fps.license.replies", "fps.license.dlq",
        ] {
            #expect(stdout.contains("\(topic): exists"), "\(topic) not reported: \(stdout)")
        }
        #expect(stdout.contains("fps.license.requests.continuity: exists, 12 partitions"), "\(stdout)")
        _ = await broker.terminate()
    }

    @Test("A request topic with fewer partitions than asked fails the run, naming it and the remedy")
    func tooFewRequestPartitionsFail() async throws {
        let broker = try RunningProcess("broker", ["broker", "--partitions", "6"], controlInput: true)
        let bootstrap = try await broker.firstLine()
        let result = try await KSMBinary.run(["admin", "create-topics", "--brokers", bootstrap, "--partitions", "12", "--class-topics"], environment: [:])
        let (stdout, stderr) = Self.output(result)
        #expect(result.status == 1, "\(stdout)\(stderr)")
        #expect(stderr.contains("fps.license.requests has 6 partitions, fewer than the 12 asked"), "\(stderr)")
        #expect(stderr.contains("--alter --partitions 12"), "\(stderr)")
        #expect(!stderr.contains("USAGE"), "a runtime failure prints no usage text")
        _ = await broker.terminate()
    }

    @Test("A missing topic the broker cannot create fails within the timeout, naming the topic")
    func missingTopicThatCannotBeCreatedFails() async throws {
        // Only the requests topic exists; the mock refuses to create the others (no CreateTopics).
        let broker = try RunningProcess("broker", ["broker", "--topics", "fps.license.requests"], controlInput: true)
        let bootstrap = try await broker.firstLine()
        let began = ContinuousClock.now
        let result = try await KSMBinary.run(["admin", "create-topics", "--brokers", bootstrap, "--timeout", "3"], environment: [:])
        let (stdout, stderr) = Self.output(result)
        #expect(result.status == 1, "\(stdout)\(stderr)")
        #expect(stdout.contains("fps.license.requests: exists") && stdout.contains("fps.license.replies: missing"), "\(stdout)")
        #expect(stderr.contains("Cannot create fps.license.replies, fps.license.dlq"), "\(stderr)")
        #expect(ContinuousClock.now - began < .seconds(30))
        _ = await broker.terminate()
    }

    @Test("ksm broker --topics NAME:N makes that topic with N partitions; a plain name gets --partitions, a dead-letter topic one")
    func brokerTopicPartitions() async throws {
        let broker = try RunningProcess(
            "broker",
            [
                "broker", "--partitions", "5", "--topics", "fps.license.requests", "--topics", "fps.license.replies.edge.bench-1:1", "--topics",
                "fps.license.dlq",
            ],
            controlInput: true)
        let bootstrap = try await broker.firstLine()
        let topics = try await KafkaAdmin.topics(bootstrap: bootstrap, timeout: .seconds(20))
        #expect(topics["fps.license.requests"]?.partitions == 5)
        #expect(topics["fps.license.replies.edge.bench-1"]?.partitions == 1)
        #expect(topics["fps.license.dlq"]?.partitions == 1)
        #expect(topics["fps.license.replies"] == nil, "only the topics named are made")
        _ = await broker.terminate()
    }

    @Test("ksm broker refuses a --topics entry whose partition count is not a positive number, naming the entry")
    func brokerTopicEntryRefused() async throws {
        for entry in ["fps.license.requests:0", "fps.license.requests:many", ":3", "a:1:2"] {
            let result = try await KSMBinary.run(["broker", "--topics", entry], environment: [:])
            let (stdout, stderr) = Self.output(result)
            #expect(result.status == 64, "\(entry): \(stdout)\(stderr)")
            #expect(stderr.contains("--topics entry '\(entry)'"), "\(entry): \(stderr)")
        }
    }

    @Test("Without brokers it is a configuration mistake: status 64, saying what to set")
    func noBrokersIsAUsageError() async throws {
        let result = try await KSMBinary.run(["admin", "create-topics"], environment: [:])
        #expect(result.status == 64)
        #expect(Self.output(result).stderr.contains("KSM_KAFKA_BROKERS"))
    }
}
