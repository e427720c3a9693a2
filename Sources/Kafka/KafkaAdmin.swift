internal import CRdKafka
import Logging
import OwnedThreads

/// Read-only questions about a consumer group, answered by the broker without joining the group:
/// for tests and tools that check what a fleet committed.
package enum KafkaAdmin {
    /// Per partition `0..<partitions` of `topic`: (log end offset, offset `group` committed; -1 for
    /// none), asked on a thread of its own (both calls block up to `timeout`).
    package static func committedOffsets(
        bootstrap: String, group: String, topic: String, partitions: Int, timeout: Duration = .seconds(10)
    ) async throws(KafkaError) -> [(high: Int64, committed: Int64)] {
        let config = RdKafkaConfig()
        try config.set("bootstrap.servers", bootstrap)
        try config.set("group.id", group)
        try config.set("enable.auto.commit", "false")
        // Never subscribes: rd_kafka_committed asks the group coordinator directly.
        let handle = try RdKafkaHandle.make(.consumer, config: config, context: RdKafkaContext(logger: Logger(label: "kafka.admin")))
        let ms = Int32(clamping: timeout.milliseconds)
        let result: Result<[(high: Int64, committed: Int64)], KafkaError> = await OwnedThread.run(name: "kafka-committed") {
            handle.withRaw { rk in
                let list = RdKafkaTopicPartitionList(capacity: partitions)
                for p in 0..<partitions { list.add(TopicPartition(topic: topic, partition: Int32(p))) }
                let err = rd_kafka_committed(rk, list.raw, ms)
                guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { return .failure(KafkaError(err, context: "committed")) }
                if let error = list.firstError(context: "committed") { return .failure(error) }
                var rows: [(high: Int64, committed: Int64)] = []
                for (tp, committed) in list.partitionsWithOffsets {
                    var low: Int64 = -1
                    var high: Int64 = -1
                    let werr = tp.topic.withCString { rd_kafka_query_watermark_offsets(rk, $0, tp.partition, &low, &high, ms) }
                    guard werr == RD_KAFKA_RESP_ERR_NO_ERROR else { return .failure(KafkaError(werr, context: "watermarks \(tp)")) }
                    rows.append((high, committed))
                }
                return .success(rows)
            }
        }
        return try result.get()
    }
}
