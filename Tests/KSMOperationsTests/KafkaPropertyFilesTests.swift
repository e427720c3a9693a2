import Foundation
import KSMService
import Kafka
import Testing

@testable import KSMOperations

/// Secret librdkafka properties read from files, and the topics `ksm admin create-topics` plans.
@Suite struct KafkaPropertyFilesTests {
    static let required: [String: String] = ["KSM_KAFKA_BROKERS": "k:9092", "KSM_REDIS_URL": "redis://r:6379/0", "KSM_CREDENTIALS": "/c.json"]

    /// A file of the test's own with `content`, at `mode`.
    func secretFile(_ content: [UInt8], mode: Int = 0o600) throws -> String {
        let path = NSTemporaryDirectory() + "ksm-kafka-property-\(UUID().uuidString)"
        try Data(content).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    @Test("The value is the file's text less one trailing line break; other whitespace is kept")
    func valueDropsOneLineBreak() {
        #expect(KafkaPropertyFiles.value(of: Array("s3cret\n".utf8)) == "s3cret")
        #expect(KafkaPropertyFiles.value(of: Array("s3cret\r\n".utf8)) == "s3cret")
        #expect(KafkaPropertyFiles.value(of: Array(" s3 cret \n\n".utf8)) == " s3 cret \n")
        #expect(KafkaPropertyFiles.value(of: [0x61, 0x00, 0x62]) == nil, "a NUL would cut librdkafka's C string short")
        #expect(KafkaPropertyFiles.value(of: [0xFF, 0xFE]) == nil)
    }

    @Test("KSM_KAFKA_PROPERTY_FILES puts each file's content into the worker's librdkafka properties, and --check-config shows only the path")
    func filesBecomeProperties() throws {
        let secret = "p@ss/w?rd#%:+&=; \"'"
        let path = try secretFile(Array((secret + "\n").utf8))
        defer { unlink(path) }
        var env = Self.required
        env["KSM_KAFKA_PROPERTIES"] = "security.protocol=SASL_SSL"
        env["KSM_KAFKA_PROPERTY_FILES"] = "sasl.password=\(path)"
        let configuration = try ServeConfiguration.resolve(flags: [:], environment: env)
        #expect(configuration.worker.kafkaProperties["sasl.password"] == secret)
        #expect(configuration.worker.kafkaProperties["security.protocol"] == "SASL_SSL")
        #expect(configuration.summary.contains(path) && !configuration.summary.contains("p@ss"))
    }

    @Test("A property file others may read, a missing one and a property given twice are each refused by name, never by content")
    func badFilesAreRefused() throws {
        let exposed = try secretFile(Array("hunter4".utf8), mode: 0o644)
        let empty = try secretFile([])
        defer {
            unlink(exposed)
            unlink(empty)
        }
        let cases: [(files: [String: String], inline: [String: String], expected: String)] = [
            (["sasl.password": exposed], [:], "readable or writable by other users"),
            (["sasl.password": "/nonexistent/ksm-password"], [:], "/nonexistent/ksm-password"),
            (["sasl.password": empty], [:], "the file is empty"),
            (["sasl.password": exposed], ["sasl.password": "hunter5"], "also given with a value"),
        ]
        for (files, inline, expected) in cases {
            let read = KafkaPropertyFiles.read(files, inline: inline)
            #expect(read.properties.isEmpty)
            let text = read.problems.map(\.description).joined()
            #expect(read.problems.count == 1 && text.contains("sasl.password") && text.contains(expected), "\(text)")
            #expect(!text.contains("hunter"))
        }
    }

    @Test("An env entry with no key in KSM_KAFKA_PROPERTIES is refused without quoting it (it may be a password cut at ';')")
    func keylessEntryIsNotQuoted() throws {
        var env = Self.required
        env["KSM_KAFKA_PROPERTIES"] = "sasl.password=abc;hunter6"
        do {
            _ = try ServeConfiguration.resolve(flags: [:], environment: env)
            Issue.record("a keyless entry was accepted")
        } catch {
            #expect(error.names("KSM_KAFKA_PROPERTIES"))
            #expect(!error.description.contains("hunter6"), "\(error.description)")
        }
    }

    @Test("The plan covers the requests topic, the three class topics, replies and dead letters, with their retention")
    func planNamesEveryTopic() {
        var plan = TopicProvisioning()
        plan.configs = ["min.insync.replicas": "2"]
        let specs = plan.specifications(requestsTopic: "r", classTopics: true, repliesTopic: "out", deadLetterTopic: "dead")
        #expect(specs.map(\.name) == ["r", "r.continuity", "r.new", "r.prefetch", "out", "dead"])
        #expect(specs.map(\.name) == RequestTopics(requestsTopic: "r", classTopics: true).all + ["out", "dead"])
        #expect(specs.allSatisfy { $0.replicationFactor == 3 && $0.configs["min.insync.replicas"] == "2" })
        #expect(specs.dropLast().allSatisfy { $0.partitions == 12 && $0.configs["retention.ms"] == "3600000" })
        #expect(specs.last?.partitions == 3 && specs.last?.configs["retention.ms"] == "604800000")
        #expect(plan.specifications(requestsTopic: "r", classTopics: false, repliesTopic: "out", deadLetterTopic: "dead").map(\.name) == ["r", "out", "dead"])
    }

    @Test("An existing request topic with fewer partitions than planned is refused; anything else is usable, with a note where it differs")
    func verdicts() {
        let spec = KafkaAdmin.TopicSpecification(name: "r", partitions: 12, replicationFactor: 3)
        #expect(
            TopicProvisioning.verdict(for: spec, existing: .init(partitions: 6, replicationFactor: 3), readsRequests: true)
                == .tooFewPartitions(have: 6, want: 12))
        #expect(
            TopicProvisioning.verdict(for: spec, existing: .init(partitions: 6, replicationFactor: 3), readsRequests: false)
                == .usable(note: "12 partitions planned"))
        #expect(
            TopicProvisioning.verdict(for: spec, existing: .init(partitions: 24, replicationFactor: 1), readsRequests: true)
                == .usable(note: "12 partitions planned, replication factor 3 planned"))
        #expect(TopicProvisioning.verdict(for: spec, existing: .init(partitions: 12, replicationFactor: 3), readsRequests: true) == .usable(note: nil))
    }
}
