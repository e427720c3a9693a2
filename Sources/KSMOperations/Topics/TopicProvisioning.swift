import KSMService
import Kafka

/// The topics a fleet needs, and what to make of the ones a cluster already has: the plan behind
/// `ksm admin create-topics`, which the deployment's topics Job runs before any worker starts.
///
/// Every topic a worker reads or writes: the requests topic, with class topics the three
/// `<requests>.<class>` topics (``RequestTopics``, the same names the workers subscribe to), the
/// replies topic and the dead-letter topic. An existing topic is never changed: adding partitions
/// moves keys (accounts) to other partitions, which the operator does on purpose, between events.
package struct TopicProvisioning: Sendable {
    /// Partitions of every topic but the dead letters: the requests topic's count bounds the fleet
    /// (one worker per partition), and the class topics are scaled on alike.
    package var partitions = 12
    package var deadLetterPartitions = 3
    package var replicationFactor = 3
    /// Requests and replies are worth nothing once their deadline passed: an hour keeps a backlog
    /// through a long outage and little more.
    package var retentionMilliseconds: Int64 = 3_600_000
    /// Dead letters are read by people, after the fact: a week.
    package var deadLetterRetentionMilliseconds: Int64 = 604_800_000
    /// Further topic configs for every topic created (`min.insync.replicas=2`).
    package var configs: [String: String] = [:]

    package init() {}

    /// The topics to have, in the order they are reported.
    package func specifications(requestsTopic: String, classTopics: Bool, repliesTopic: String, deadLetterTopic: String)
        -> [KafkaAdmin.TopicSpecification]
    {
        let requests = RequestTopics(requestsTopic: requestsTopic, classTopics: classTopics).all
        func spec(_ name: String, partitions: Int, retention: Int64) -> KafkaAdmin.TopicSpecification {
            KafkaAdmin.TopicSpecification(
                name: name, partitions: partitions, replicationFactor: replicationFactor,
                configs: configs.merging(["retention.ms": String(retention)]) { given, _ in given })
        }
        return requests.map { spec($0, partitions: partitions, retention: retentionMilliseconds) }
            + [
                spec(repliesTopic, partitions: partitions, retention: retentionMilliseconds),
                spec(deadLetterTopic, partitions: deadLetterPartitions, retention: deadLetterRetentionMilliseconds),
            ]
    }

    /// What an existing topic means for the fleet.
    package enum Verdict: Sendable, Equatable {
        /// Usable as it is; `note` says where it differs from the plan without harm.
        case usable(note: String?)
        /// Fewer request partitions than planned: the fleet could not grow to its planned size.
        case tooFewPartitions(have: Int, want: Int)
    }

    /// Judges an existing topic against its specification. Only a topic workers read requests from
    /// is refused for fewer partitions; for replies and dead letters the count bounds nothing.
    package static func verdict(for spec: KafkaAdmin.TopicSpecification, existing: KafkaAdmin.TopicDescription, readsRequests: Bool) -> Verdict {
        if readsRequests, existing.partitions < spec.partitions {
            return .tooFewPartitions(have: existing.partitions, want: spec.partitions)
        }
        var notes: [String] = []
        if existing.partitions != spec.partitions { notes.append("\(spec.partitions) partitions planned") }
        if existing.replicationFactor < spec.replicationFactor { notes.append("replication factor \(spec.replicationFactor) planned") }
        return .usable(note: notes.isEmpty ? nil : notes.joined(separator: ", "))
    }
}
