import ArgumentParser
import Foundation
import KSMOperations
import KSMService
import Kafka
import Logging

extension AdminCommand {
    /// `ksm admin create-topics`: makes sure every topic the fleet reads and writes exists, creating
    /// the missing ones through Kafka's admin API (CreateTopics). Idempotent: a re-run finds them and
    /// changes nothing, so the deployment runs it as a Job before the workers, on every rollout.
    struct CreateTopics: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-topics",
            abstract: "Create the requests (and class), replies and dead-letter topics the workers use, where missing; never changes an existing topic.",
            discussion: """
                Topic names and the connection are read like `ksm serve` reads them, flags over environment: KSM_KAFKA_BROKERS, \
                KSM_REQUESTS_TOPIC, KSM_CLASS_TOPICS, KSM_REPLIES_TOPIC, KSM_DLQ_TOPIC, KSM_KAFKA_PROPERTIES (K=V;K=V) and \
                KSM_KAFKA_PROPERTY_FILES (NAME=PATH,...), so a Job with the workers' ConfigMap creates exactly the topics they \
                subscribe to. One line per topic on standard output. Exit status 0 when every topic exists; 1 when one is missing \
                and could not be created, or a topic workers read requests from has fewer partitions than asked (it would cap the \
                fleet: add partitions with kafka-topics.sh --alter, between events).
                """
        )

        @Option(help: "Kafka bootstrap servers (env KSM_KAFKA_BROKERS).") var brokers: String?
        @Option(help: "Requests topic (env KSM_REQUESTS_TOPIC). Default: fps.license.requests.") var requestsTopic: String?
        @Flag(help: "Also <requests-topic>.continuity, .new and .prefetch, as ksm serve --class-topics reads them (env KSM_CLASS_TOPICS=true).")
        var classTopics = false
        @Option(help: "Replies topic (env KSM_REPLIES_TOPIC). Default: fps.license.replies.") var repliesTopic: String?
        @Option(help: "Dead-letter topic (env KSM_DLQ_TOPIC). Default: fps.license.dlq.") var dlqTopic: String?
        @Option(help: "Partitions of the requests, class and replies topics: the most workers that can share the load. Default: 12.")
        var partitions = 12
        @Option(help: "Partitions of the dead-letter topic. Default: 3.") var dlqPartitions = 3
        @Option(help: "Replicas of every partition. Default: 3.") var replicationFactor = 3
        @Option(help: "retention.ms of the requests, class and replies topics. Default: 3600000 (1 h).") var retentionMs: Int64 = 3_600_000
        @Option(help: "retention.ms of the dead-letter topic. Default: 604800000 (7 days).") var dlqRetentionMs: Int64 = 604_800_000
        @Option(name: .customLong("config"), help: "Topic config KEY=VALUE for every topic created, e.g. min.insync.replicas=2; repeatable.")
        var topicConfigs: [String] = []
        @Option(name: .customLong("kafka-property"), help: "librdkafka KEY=VALUE for the connection; repeatable. Secrets belong in --kafka-property-file.")
        var kafkaProperties: [String] = []
        @Option(
            name: .customLong("kafka-property-file"),
            help: "librdkafka NAME=PATH: the value is the file's content, read as a secret file (mode 600, or 0440 with the process's group); repeatable.")
        var kafkaPropertyFiles: [String] = []
        @Option(help: "Seconds to wait for the cluster's answers. Default: 60.") var timeout: Double = 60

        func run() async throws {
            // librdkafka's own warnings (a broker not reachable yet) go to standard error, keeping
            // standard output the one line per topic; as JSON where the workers log JSON (the Job
            // shares their ConfigMap's KSM_LOG_FORMAT).
            let format = ProcessInfo.processInfo.environment[ServeSetting.logFormat.environment]
            if format == LogFormat.json.rawValue {
                LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
            } else {
                LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
            }
            do {
                try await create()
            } catch let failure as CommandFailure {
                throw failure.report(command: "admin create-topics")
            }
        }

        /// A setting's value: the flag, else the variable `ksm serve` reads for it.
        private func value(_ flag: String?, _ key: String, _ environment: [String: String]) -> String? {
            flag ?? ServeSetting.byKey[key].flatMap { environment[$0.environment] }
        }

        /// `KEY=VALUE` items as a map; an item without a key is a configuration problem named without
        /// its text (it may be part of a secret cut at a separator).
        private static func pairs(_ items: [String], from source: String) throws -> [String: String] {
            var result: [String: String] = [:]
            for (index, item) in items.enumerated() where !item.trimmingCharacters(in: .whitespaces).isEmpty {
                guard let eq = item.firstIndex(of: "="), eq != item.startIndex else {
                    throw CommandFailure.configuration(["\(source) takes KEY=VALUE pairs; entry \(index + 1) has no key (not shown: it may hold a secret)."])
                }
                result[String(item[..<eq]).trimmingCharacters(in: .whitespaces)] = String(item[item.index(after: eq)...])
            }
            return result
        }

        private func connectionProperties(_ environment: [String: String]) throws -> [String: String] {
            var properties: [String: String] = [:]
            if let text = environment["KSM_KAFKA_PROPERTIES"] {
                properties = try Self.pairs(text.split(separator: ";").map(String.init), from: "KSM_KAFKA_PROPERTIES")
            }
            properties.merge(try Self.pairs(kafkaProperties, from: "--kafka-property")) { _, flag in flag }
            var files: [String: String] = [:]
            if let text = environment["KSM_KAFKA_PROPERTY_FILES"] {
                files = try Self.pairs(text.split(separator: ",").map(String.init), from: "KSM_KAFKA_PROPERTY_FILES")
            }
            files.merge(try Self.pairs(kafkaPropertyFiles, from: "--kafka-property-file")) { _, flag in flag }
            let read = KafkaPropertyFiles.read(files, inline: properties)
            guard read.problems.isEmpty else { throw CommandFailure.configuration(read.problems.map { "\($0.description)." }) }
            return properties.merging(read.properties) { inline, _ in inline }
        }

        private func create() async throws {
            let environment = ProcessInfo.processInfo.environment
            guard let bootstrap = value(brokers, "brokers", environment), !bootstrap.isEmpty else {
                throw CommandFailure.configuration(["No brokers given: pass --brokers or set KSM_KAFKA_BROKERS."])
            }
            // Kafka's own bounds are far below Int32's; checked here, the C call's Int32 never traps.
            let counts = 1...100_000
            guard counts.contains(partitions), counts.contains(dlqPartitions), (1...32).contains(replicationFactor), retentionMs != 0, dlqRetentionMs != 0
            else {
                throw CommandFailure.configuration([
                    "--partitions and --dlq-partitions must be 1 to 100000, --replication-factor 1 to 32, the retentions not 0 (-1: forever)."
                ])
            }
            guard timeout > 0, timeout <= 3_600 else {
                throw CommandFailure.configuration(["--timeout is \(timeout): give more than 0 and at most 3600 seconds."])
            }
            let properties = try connectionProperties(environment)
            var plan = TopicProvisioning()
            plan.partitions = partitions
            plan.deadLetterPartitions = dlqPartitions
            plan.replicationFactor = replicationFactor
            plan.retentionMilliseconds = retentionMs
            plan.deadLetterRetentionMilliseconds = dlqRetentionMs
            plan.configs = try Self.pairs(topicConfigs, from: "--config")
            // The worker's own defaults, so an unset name means the same topic to both.
            let defaults = WorkerConfiguration(brokers: bootstrap)
            let requests = value(requestsTopic, "requests-topic", environment) ?? defaults.requestsTopic
            let classes = classTopics || ["true", "yes", "1"].contains(value(nil, "class-topics", environment)?.lowercased() ?? "")
            let specs = plan.specifications(
                requestsTopic: requests, classTopics: classes,
                repliesTopic: value(repliesTopic, "replies-topic", environment) ?? defaults.repliesTopic,
                deadLetterTopic: value(dlqTopic, "dlq-topic", environment) ?? defaults.deadLetterTopic)
            let readers = Set(RequestTopics(requestsTopic: requests, classTopics: classes).all)
            let wait = Duration.milliseconds(Int64((timeout * 1000).rounded()))

            let existing: [String: KafkaAdmin.TopicDescription]
            do { existing = try await KafkaAdmin.topics(bootstrap: bootstrap, properties: properties, timeout: wait) } catch {
                throw CommandFailure.runtime(
                    "Cannot read the cluster's topics from \(bootstrap): \(error.description). Check --brokers and the connection properties.")
            }
            var failures: [String] = []
            let missing = specs.filter { existing[$0.name] == nil }
            var created: [String: KafkaError?] = [:]
            if !missing.isEmpty {
                do { created = try await KafkaAdmin.createTopics(missing, bootstrap: bootstrap, properties: properties, timeout: wait) } catch {
                    failures.append("Cannot create \(missing.map(\.name).joined(separator: ", ")): \(error.description).")
                }
            }
            for spec in specs {
                if let topic = existing[spec.name] {
                    switch TopicProvisioning.verdict(for: spec, existing: topic, readsRequests: readers.contains(spec.name)) {
                    case .usable(let note):
                        print(
                            "\(spec.name): exists, \(topic.partitions) partitions, replication factor \(topic.replicationFactor)\(note.map { " (\($0))" } ?? "")"
                        )
                    case .tooFewPartitions(let have, let want):
                        print("\(spec.name): exists with \(have) partitions, fewer than \(want)")
                        failures.append(
                            "\(spec.name) has \(have) partitions, fewer than the \(want) asked: workers beyond \(have) would sit idle. Add partitions (kafka-topics.sh --alter --partitions \(want)) between events, or ask for \(have)."
                        )
                    }
                } else if let outcome = created[spec.name] {
                    if let error = outcome, error.code != .topicAlreadyExists {
                        print("\(spec.name): not created")
                        failures.append("\(error.description).")
                    } else {
                        print(
                            "\(spec.name): created, \(spec.partitions) partitions, replication factor \(spec.replicationFactor), retention.ms \(spec.configs["retention.ms"] ?? "")"
                        )
                    }
                } else {
                    print("\(spec.name): missing")
                }
            }
            guard failures.isEmpty else { throw CommandFailure.runtime(failures.joined(separator: " ")) }
        }
    }
}
