internal import CRdKafka
import Logging
import OwnedThreads

extension KafkaAdmin {
    /// A topic to create: its name, partition count, replication factor and topic-level configs
    /// (`retention.ms`, `min.insync.replicas`, ...).
    package struct TopicSpecification: Sendable, Hashable {
        package var name: String
        package var partitions: Int
        package var replicationFactor: Int
        package var configs: [String: String]

        package init(name: String, partitions: Int, replicationFactor: Int, configs: [String: String] = [:]) {
            self.name = name
            self.partitions = partitions
            self.replicationFactor = replicationFactor
            self.configs = configs
        }
    }

    /// A topic as the cluster's metadata describes it.
    package struct TopicDescription: Sendable, Hashable {
        package var partitions: Int
        /// Replicas of the first partition (every partition of a topic has as many).
        package var replicationFactor: Int

        package init(partitions: Int, replicationFactor: Int) {
            self.partitions = partitions
            self.replicationFactor = replicationFactor
        }
    }

    /// Every topic of the cluster by name, from one metadata request for all topics (which never
    /// auto-creates a topic), asked on a thread of its own: the call blocks up to `timeout`.
    ///
    /// - Parameter properties: librdkafka properties for the connection (`security.protocol`,
    ///   `sasl.*`, `ssl.*`): the same ones the workers use.
    package static func topics(bootstrap: String, properties: [String: String] = [:], timeout: Duration = .seconds(10))
        async throws(KafkaError) -> [String: TopicDescription]
    {
        let handle = try adminHandle(bootstrap: bootstrap, properties: properties)
        let ms = Int32(clamping: timeout.milliseconds)
        let result: Result<[String: TopicDescription], KafkaError> = await OwnedThread.run(name: "kafka-metadata") {
            handle.withRaw { rk in
                var metadata: UnsafePointer<rd_kafka_metadata>?
                let err = rd_kafka_metadata(rk, 1, nil, &metadata, ms)
                guard err == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else { return .failure(KafkaError(err, context: "metadata")) }
                defer { rd_kafka_metadata_destroy(metadata) }
                var topics: [String: TopicDescription] = [:]
                for index in 0..<Int(metadata.pointee.topic_cnt) {
                    let topic = metadata.pointee.topics[index]
                    guard topic.err == RD_KAFKA_RESP_ERR_NO_ERROR, let name = topic.topic else { continue }
                    let replicas = topic.partition_cnt > 0 ? Int(topic.partitions[0].replica_cnt) : 0
                    topics[String(cString: name)] = TopicDescription(partitions: Int(topic.partition_cnt), replicationFactor: replicas)
                }
                return .success(topics)
            }
        }
        return try result.get()
    }

    /// Asks the cluster's controller to create `topics` (Kafka's CreateTopics request) and returns
    /// each topic's outcome: nil for created, else the broker's error (`TOPIC_ALREADY_EXISTS` when
    /// another client created it meanwhile). Throws when the request as a whole fails (no
    /// controller, timed out, refused by a broker that lacks the API). Blocks a thread of its own
    /// up to `timeout`; the broker is given the same time to create them.
    package static func createTopics(
        _ topics: [TopicSpecification], bootstrap: String, properties: [String: String] = [:],
        timeout: Duration = .seconds(30)
    ) async throws(KafkaError) -> [String: KafkaError?] {
        guard !topics.isEmpty else { return [:] }
        let handle = try adminHandle(bootstrap: bootstrap, properties: properties)
        let ms = Int32(clamping: timeout.milliseconds)
        let result: Result<[String: KafkaError?], KafkaError> = await OwnedThread.run(name: "kafka-create-topics") {
            handle.withRaw { rk in createTopics(topics, on: rk, timeoutMilliseconds: ms) }
        }
        return try result.get()
    }

    /// A producer handle that never produces: the admin API and metadata requests need a client.
    private static func adminHandle(bootstrap: String, properties: [String: String]) throws(KafkaError) -> RdKafkaHandle {
        let config = RdKafkaConfig()
        try config.set(properties)
        try config.set("bootstrap.servers", bootstrap)
        return try RdKafkaHandle.make(.producer, config: config, context: RdKafkaContext(logger: Logger(label: "kafka.admin")))
    }

    private static func createTopics(_ topics: [TopicSpecification], on rk: OpaquePointer, timeoutMilliseconds ms: Int32)
        -> Result<[String: KafkaError?], KafkaError>
    {
        var errstr = [CChar](repeating: 0, count: 512)
        func text() -> String { String(decoding: errstr.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        var newTopics: [OpaquePointer?] = []
        defer { for topic in newTopics { rd_kafka_NewTopic_destroy(topic) } }
        for spec in topics {
            guard let partitions = Int32(exactly: spec.partitions), let replicas = Int32(exactly: spec.replicationFactor) else {
                return .failure(
                    KafkaError(code: .invalidArgument, message: "topic \(spec.name): partition count or replication factor out of range", isRetriable: false))
            }
            guard let topic = rd_kafka_NewTopic_new(spec.name, partitions, replicas, &errstr, errstr.count) else {
                return .failure(KafkaError(code: .invalidArgument, message: "topic \(spec.name): \(text())", isRetriable: false))
            }
            newTopics.append(topic)
            for key in spec.configs.keys.sorted() {
                let err = rd_kafka_NewTopic_set_config(topic, key, spec.configs[key] ?? "")
                guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { return .failure(KafkaError(err, context: "topic \(spec.name) config \(key)")) }
            }
        }
        guard let options = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS) else {
            return .failure(KafkaError(code: .state, message: "rd_kafka_AdminOptions_new failed", isRetriable: false))
        }
        defer { rd_kafka_AdminOptions_destroy(options) }
        // The request may take the whole time; the broker gets the same to finish creating.
        _ = rd_kafka_AdminOptions_set_request_timeout(options, ms, &errstr, errstr.count)
        _ = rd_kafka_AdminOptions_set_operation_timeout(options, ms, &errstr, errstr.count)
        guard let queue = rd_kafka_queue_new(rk) else {
            return .failure(KafkaError(code: .state, message: "rd_kafka_queue_new failed", isRetriable: false))
        }
        defer { rd_kafka_queue_destroy(queue) }
        newTopics.withUnsafeMutableBufferPointer { buffer in
            rd_kafka_CreateTopics(rk, buffer.baseAddress, buffer.count, options, queue)
        }
        // librdkafka answers within the request timeout; a little more covers its own bookkeeping.
        let (wait, overflow) = ms.addingReportingOverflow(5_000)
        guard let event = rd_kafka_queue_poll(queue, overflow ? Int32.max : wait) else {
            return .failure(KafkaError(code: .timedOut, message: "CreateTopics: no answer", isRetriable: true))
        }
        defer { rd_kafka_event_destroy(event) }
        let eventError = rd_kafka_event_error(event)
        guard eventError == RD_KAFKA_RESP_ERR_NO_ERROR else {
            let message = rd_kafka_event_error_string(event).map { String(cString: $0) } ?? "failed"
            return .failure(KafkaError(code: KafkaError.Code(rawValue: eventError.rawValue), message: "CreateTopics: \(message)"))
        }
        guard let created = rd_kafka_event_CreateTopics_result(event) else {
            return .failure(KafkaError(code: .state, message: "CreateTopics: no result in the answer", isRetriable: false))
        }
        var count = 0
        guard let results = rd_kafka_CreateTopics_result_topics(created, &count) else { return .success([:]) }
        var outcome: [String: KafkaError?] = [:]
        for index in 0..<count {
            guard let result = results[index], let name = rd_kafka_topic_result_name(result) else { continue }
            let err = rd_kafka_topic_result_error(result)
            let message = rd_kafka_topic_result_error_string(result).map { String(cString: $0) } ?? "\(err)"
            outcome[String(cString: name)] =
                err == RD_KAFKA_RESP_ERR_NO_ERROR
                ? nil : KafkaError(code: KafkaError.Code(rawValue: err.rawValue), message: "create topic \(String(cString: name)): \(message)")
        }
        return .success(outcome)
    }
}

extension KafkaError.Code {
    /// The topic exists already (CreateTopics): another client created it first.
    package static let topicAlreadyExists = KafkaError.Code(rawValue: RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS.rawValue)
}
