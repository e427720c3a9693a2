internal import CRdKafka

/// The one owner of an `rd_kafka_topic_partition_list_t` this module creates or receives with ownership.
final class RdKafkaTopicPartitionList {
    let raw: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>

    init(capacity: Int = 1) {
        raw = rd_kafka_topic_partition_list_new(Int32(max(capacity, 1)))
    }

    /// Takes ownership of a list librdkafka handed over (e.g. from `rd_kafka_assignment`).
    init(taking raw: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) {
        self.raw = raw
    }

    convenience init(_ partitions: [TopicPartition]) {
        self.init(capacity: partitions.count)
        for tp in partitions { add(tp) }
    }

    deinit {
        rd_kafka_topic_partition_list_destroy(raw)
    }

    @discardableResult
    func add(_ tp: TopicPartition, offset: Int64? = nil) -> UnsafeMutablePointer<rd_kafka_topic_partition_t> {
        // librdkafka grows the list as needed (asserting its reallocation) and never returns nil.
        guard let element = rd_kafka_topic_partition_list_add(raw, tp.topic, tp.partition) else {
            preconditionFailure("rd_kafka_topic_partition_list_add failed")
        }
        if let offset { element.pointee.offset = offset }
        return element
    }

    /// Reads a list without owning it (e.g. the one a rebalance callback lends).
    static func partitions(of list: UnsafePointer<rd_kafka_topic_partition_list_t>) -> [TopicPartition] {
        guard list.pointee.cnt > 0, let elements = list.pointee.elems else { return [] }
        return (0..<Int(list.pointee.cnt)).map { i in
            TopicPartition(topic: String(cString: elements[i].topic), partition: elements[i].partition)
        }
    }

    var partitions: [TopicPartition] { Self.partitions(of: raw) }

    /// Each element with its offset field (after `rd_kafka_position`: the next offset to fetch, or a
    /// negative logical offset when none is known yet).
    var partitionsWithOffsets: [(TopicPartition, Int64)] {
        guard raw.pointee.cnt > 0, let elements = raw.pointee.elems else { return [] }
        return (0..<Int(raw.pointee.cnt)).map { i in
            (TopicPartition(topic: String(cString: elements[i].topic), partition: elements[i].partition), elements[i].offset)
        }
    }

    /// Every per-partition error librdkafka set, by partition; empty when it set none.
    func errors(context: String) -> [TopicPartition: KafkaError] {
        guard raw.pointee.cnt > 0, let elements = raw.pointee.elems else { return [:] }
        var errors: [TopicPartition: KafkaError] = [:]
        for i in 0..<Int(raw.pointee.cnt) where elements[i].err != RD_KAFKA_RESP_ERR_NO_ERROR {
            let tp = TopicPartition(topic: String(cString: elements[i].topic), partition: elements[i].partition)
            errors[tp] = KafkaError(elements[i].err, context: "\(context) \(tp)")
        }
        return errors
    }

    /// The first per-partition error, if librdkafka set one.
    func firstError(context: String) -> KafkaError? {
        guard raw.pointee.cnt > 0, let elements = raw.pointee.elems else { return nil }
        for i in 0..<Int(raw.pointee.cnt) where elements[i].err != RD_KAFKA_RESP_ERR_NO_ERROR {
            let tp = TopicPartition(topic: String(cString: elements[i].topic), partition: elements[i].partition)
            return KafkaError(elements[i].err, context: "\(context) \(tp)")
        }
        return nil
    }
}
