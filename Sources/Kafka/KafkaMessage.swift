/// A consumed record, copied once out of librdkafka (whose `rd_kafka_message_t` is freed at once).
package struct KafkaMessage: Sendable {
    package var topic: String
    package var partition: Int32
    package var offset: Int64
    /// nil when the record has no key (not the same as an empty key).
    package var key: [UInt8]?
    package var value: [UInt8]
    /// In wire order; names may repeat. A header with a null value appears with an empty array.
    package var headers: [(String, [UInt8])]
    /// The record's timestamp in milliseconds since 1970 (the producer's create time unless the topic
    /// appends its own), or nil when the record has none. A batch the producer resent carries the
    /// timestamps of the first send.
    package var timestamp: Int64?

    package init(topic: String, partition: Int32, offset: Int64, key: [UInt8]?, value: [UInt8], headers: [(String, [UInt8])], timestamp: Int64? = nil) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
    }

    package var topicPartition: TopicPartition { TopicPartition(topic: topic, partition: partition) }

    /// The first header with this name, if any.
    package func header(_ name: String) -> [UInt8]? {
        headers.first(where: { $0.0 == name })?.1
    }
}

/// Where the broker acknowledged (acks=all) a produced record.
package struct KafkaDeliveryReport: Sendable, Hashable {
    package var topic: String
    package var partition: Int32
    package var offset: Int64
}
