/// A partition of a topic: the unit of assignment, pausing and offset storage.
public struct TopicPartition: Hashable, Sendable, CustomStringConvertible {
    /// The topic's name.
    public var topic: String
    /// The partition's number within the topic, from 0.
    public var partition: Int32

    /// Names one partition of a topic.
    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    public var description: String { "\(topic)[\(partition)]" }
}
