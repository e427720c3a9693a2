/// A consumed record, copied once out of librdkafka (whose `rd_kafka_message_t` is freed at once).
public struct KafkaMessage: Sendable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    /// nil when the record has no key (not the same as an empty key).
    public var key: [UInt8]?
    public var value: [UInt8]
    /// In wire order; names may repeat. A header with a null value appears with an empty array.
    public var headers: [(String, [UInt8])]
    /// The record's timestamp in milliseconds since 1970 (the producer's create time unless the topic
    /// appends its own), or nil when the record has none. A batch the producer resent carries the
    /// timestamps of the first send.
    public var timestamp: Int64?

    public init(topic: String, partition: Int32, offset: Int64, key: [UInt8]?, value: [UInt8], headers: [(String, [UInt8])], timestamp: Int64? = nil) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
    }

    public var topicPartition: TopicPartition { TopicPartition(topic: topic, partition: partition) }

    /// The first header with this name, if any.
    public func header(_ name: String) -> [UInt8]? {
        headers.first(where: { $0.0 == name })?.1
    }
}

/// Where the broker acknowledged (acks=all) a produced record.
public struct KafkaDeliveryReport: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
}
