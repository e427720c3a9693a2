import Kafka

/// The topics a worker reads requests from, and the class each one gives its jobs.
///
/// With class topics the edge puts each request on its class's topic, so the backlog of one class
/// cannot sit in front of another's in a partition; the requests topic stays readable for edges that
/// have not moved (there the job's `priority` field decides).
package struct RequestTopics: Sendable, Hashable {
    /// The single requests topic every worker reads.
    package let requests: String
    /// Per class topic, its class; empty without class topics.
    package let classes: [String: LicenseJob.Priority]

    package init(requestsTopic: String, classTopics: Bool) {
        requests = requestsTopic
        classes =
            classTopics
            ? Dictionary(uniqueKeysWithValues: JobScheduler.classes.map { (Self.topic(for: $0, requestsTopic: requestsTopic), $0) })
            : [:]
    }

    /// `<requests topic>.<class>`, e.g. `fps.license.requests.continuity`.
    package static func topic(for priority: LicenseJob.Priority, requestsTopic: String) -> String {
        "\(requestsTopic).\(priority.rawValue)"
    }

    /// Every topic to subscribe to: the requests topic first, then the class topics in service order.
    package var all: [String] {
        [requests] + (classes.isEmpty ? [] : JobScheduler.classes.map { Self.topic(for: $0, requestsTopic: requests) })
    }

    /// The fetch groups there are: the requests topic's, and one per class topic in service order.
    var fetchClasses: [ClassFetchControl.FetchClass] {
        [.mixed] + (classes.isEmpty ? [] : JobScheduler.classes.map { .priority($0) })
    }

    /// The class a topic's jobs have whatever their `priority` field says; nil for the requests topic.
    package func priority(ofTopic topic: String) -> LicenseJob.Priority? { classes[topic] }

    /// The fetch group a partition belongs to (see ``ClassFetchControl``).
    func fetchClass(of partition: TopicPartition) -> ClassFetchControl.FetchClass {
        classes[partition.topic].map { .priority($0) } ?? .mixed
    }
}
