internal import CRdKafka
import Logging
import Loopback
import OwnedThreads

#if canImport(Glibc)
    import Glibc
#endif

/// librdkafka's in-process mock Kafka cluster, for tests and `ksm demo`.
///
/// The brokers listen on 127.0.0.1 with ephemeral ports (librdkafka 2.0.2 binds loopback and offers no
/// option to change it). The cluster lives inside a producer `rd_kafka_t` of its own, which is never
/// used to produce; both are freed in `deinit`, cluster first.
package final class KafkaMockCluster: @unchecked Sendable {
    // @unchecked: the mock cluster API is thread-safe (it posts operations to the cluster's own thread).

    /// A Kafka protocol request type, as used by `pushRequestErrors`.
    package struct APIKey: Hashable, Sendable {
        package var rawValue: Int16
        package init(rawValue: Int16) { self.rawValue = rawValue }
        package static let produce = APIKey(rawValue: 0)
        package static let fetch = APIKey(rawValue: 1)
        package static let listOffsets = APIKey(rawValue: 2)
        package static let metadata = APIKey(rawValue: 3)
        package static let offsetCommit = APIKey(rawValue: 8)
        package static let offsetFetch = APIKey(rawValue: 9)
        package static let findCoordinator = APIKey(rawValue: 10)
        package static let joinGroup = APIKey(rawValue: 11)
        package static let heartbeat = APIKey(rawValue: 12)
        package static let leaveGroup = APIKey(rawValue: 13)
        package static let syncGroup = APIKey(rawValue: 14)
        package static let initProducerId = APIKey(rawValue: 22)

        /// The request types by the names Kafka's protocol guide gives them (`Produce`, `OffsetCommit`),
        /// for fault injection from text (`ksm broker`'s control commands).
        package static let byName: [String: APIKey] = [
            "Produce": .produce, "Fetch": .fetch, "ListOffsets": .listOffsets, "Metadata": .metadata,
            "OffsetCommit": .offsetCommit, "OffsetFetch": .offsetFetch, "FindCoordinator": .findCoordinator,
            "JoinGroup": .joinGroup, "Heartbeat": .heartbeat, "LeaveGroup": .leaveGroup, "SyncGroup": .syncGroup,
            "InitProducerId": .initProducerId,
        ]

        /// Nil when `name` is not one of ``byName``'s keys (compared without regard to case).
        package init?(name: String) {
            guard let key = Self.byName.first(where: { $0.key.lowercased() == name.lowercased() })?.value else { return nil }
            self = key
        }
    }

    private let cluster: OpaquePointer
    private let handle: RdKafkaHandle
    /// `host:port,...` of every mock broker, for `bootstrap.servers`.
    package let bootstrapServers: String
    package let brokerCount: Int

    /// - Parameter brokers: broker IDs are 1...brokers.
    package init(brokers: Int = 1, logger: Logger = Logger(label: "kafka.mock")) throws(KafkaError) {
        let config = RdKafkaConfig()
        // No bootstrap servers: this handle only hosts the cluster; keep it from logging about that.
        try config.set("log_level", "3")
        let handle = try RdKafkaHandle.make(.producer, config: config, context: RdKafkaContext(logger: logger))
        let cluster = handle.withRaw { rk in rd_kafka_mock_cluster_new(rk, Int32(brokers)) }
        guard let cluster else {
            throw KafkaError(code: .state, message: "rd_kafka_mock_cluster_new failed", isRetriable: false)
        }
        self.handle = handle
        self.cluster = cluster
        self.brokerCount = brokers
        self.bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
    }

    deinit {
        // Cluster before its host handle, both on a thread of ours: destroying waits for the
        // cluster's thread and the host client's, which must not hold a cooperative thread.
        let teardown = ClusterTeardown(cluster: cluster, host: handle)
        OwnedThread.runOffPool(name: "kafka-mock-down") { teardown.run() }
    }

    /// The cluster and the client hosting it, handed to the thread that destroys them in order.
    private struct ClusterTeardown: @unchecked Sendable {
        // @unchecked: used once, by the one thread that destroys them.
        let cluster: OpaquePointer
        let host: RdKafkaHandle

        func run() {
            rd_kafka_mock_cluster_destroy(cluster)
            // The host's last reference usually drops here, on this thread (its own destroy follows).
            withExtendedLifetime(host) {}
        }
    }

    /// Creates a topic now, instead of relying on auto-creation.
    ///
    /// librdkafka 2.0.2 replicates every partition on the first `min(3, brokers)` brokers and picks a
    /// random one as leader whatever `replicationFactor` says; `setPartitionLeader` places leaders.
    package func createTopic(_ name: String, partitions: Int = 1, replicationFactor: Int = 1) throws(KafkaError) {
        let err = rd_kafka_mock_topic_create(cluster, name, Int32(partitions), Int32(replicationFactor))
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: "create topic \(name)") }
    }

    /// The next `errors.count` requests of this type fail with these codes, in order (cluster-wide).
    /// `.transport` makes the broker drop the connection instead.
    package func pushRequestErrors(_ apiKey: APIKey, _ errors: [KafkaError.Code]) {
        let raw = errors.map { rd_kafka_resp_err_t(rawValue: $0.rawValue) }
        raw.withUnsafeBufferPointer { buffer in
            rd_kafka_mock_push_request_errors_array(cluster, apiKey.rawValue, buffer.count, buffer.baseAddress)
        }
    }

    /// Forgets the errors still queued for this request type.
    package func clearRequestErrors(_ apiKey: APIKey) {
        rd_kafka_mock_clear_request_errors(cluster, apiKey.rawValue)
    }

    /// The error metadata requests report for this topic (`.noError` to clear).
    package func setTopicError(_ topic: String, _ code: KafkaError.Code) {
        rd_kafka_mock_topic_set_error(cluster, topic, rd_kafka_resp_err_t(rawValue: code.rawValue))
    }

    /// Disconnects the broker's clients and refuses new connections (leadership does not move).
    ///
    /// Waits for any child process being spawned meanwhile (``SpawnGate``): librdkafka 2.0.2 closes the
    /// listener and binds its port again at once, and aborts the process when a spawning child's copy
    /// of the listener makes that bind fail.
    package func setBrokerDown(_ brokerID: Int32) throws(KafkaError) {
        let err = SpawnGate.holding { rd_kafka_mock_broker_set_down(cluster, brokerID) }
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: "broker \(brokerID) down") }
    }

    /// Accepts connections again, on the broker's old port.
    ///
    /// librdkafka 2.0.2 re-binds that port and aborts the whole process if it cannot (an assertion in
    /// `rd_kafka_mock_broker_cmd`). While the broker was down, any socket of this host may have taken
    /// the port (an outgoing connection's ephemeral port, a server handed a "free" port), so it is
    /// tried first: waited for up to `portWait`, then refused with an error, never an abort. Unlike
    /// ``setBrokerDown(_:)`` it needs no ``SpawnGate``: coming up only listens on the socket the down
    /// bound, and a spawning child's copy of it is the same socket.
    package func setBrokerUp(_ brokerID: Int32, portWait: Duration = .seconds(10)) throws(KafkaError) {
        if let port = port(ofBroker: brokerID) {
            let deadline = ContinuousClock.now + portWait
            while !Self.canBind(port: port) {
                guard ContinuousClock.now < deadline else {
                    throw KafkaError(
                        code: .state, message: "broker \(brokerID) cannot come back up: another socket holds its port \(port)",
                        isRetriable: true)
                }
                usleep(10_000)
            }
        }
        let err = rd_kafka_mock_broker_set_up(cluster, brokerID)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: "broker \(brokerID) up") }
    }

    /// The loopback port of broker `brokerID` (1-based, in the order of ``bootstrapServers``).
    private func port(ofBroker brokerID: Int32) -> UInt16? {
        let servers = bootstrapServers.split(separator: ",")
        let index = Int(brokerID) - 1
        guard servers.indices.contains(index), let port = servers[index].split(separator: ":").last else { return nil }
        return UInt16(port)
    }

    /// True when 127.0.0.1:`port` can be bound as librdkafka binds it (`SO_REUSEADDR`).
    private static func canBind(port: UInt16) -> Bool {
        guard let (fd, _) = try? LoopbackSocket.bound(port: Int(port)) else { return false }
        close(fd)
        return true
    }

    /// Moves a partition's leadership to `brokerID` (-1: no leader), so clients must find the new
    /// leader through metadata, as after a broker failure in a real cluster (where the mock's
    /// `setBrokerDown` alone never moves leadership).
    ///
    /// A negative partition is refused here: librdkafka 2.0.2 indexes its partition array with it
    /// and writes out of bounds (an unknown broker it refuses itself, with another code).
    package func setPartitionLeader(topic: String, partition: Int32, brokerID: Int32) throws(KafkaError) {
        guard partition >= 0 else { throw invalid("partition \(partition) of \(topic)") }
        guard brokerID == -1 || isBroker(brokerID) else { throw invalid("leader broker \(brokerID) for \(topic)/\(partition)") }
        let err = rd_kafka_mock_partition_set_leader(cluster, topic, partition, brokerID)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: "leader of \(topic)/\(partition)") }
    }

    /// Makes `brokerID` the coordinator of consumer group `group`: its members must rediscover the
    /// coordinator (FindCoordinator) and rejoin, as when a coordinator moves in a real cluster.
    ///
    /// An unknown broker is refused: librdkafka 2.0.2's mock accepts it and aborts at the group's next
    /// FindCoordinator.
    package func setGroupCoordinator(group: String, brokerID: Int32) throws(KafkaError) {
        guard isBroker(brokerID) else { throw invalid("coordinator broker \(brokerID) for group \(group)") }
        let err = rd_kafka_mock_coordinator_set(cluster, "group", group, brokerID)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: "coordinator of group \(group)") }
    }

    private func isBroker(_ brokerID: Int32) -> Bool { brokerID >= 1 && Int(brokerID) <= brokerCount }

    private func invalid(_ what: String) -> KafkaError {
        KafkaError(code: .invalidArgument, message: "no such \(what): this cluster has brokers 1-\(brokerCount)", isRetriable: false)
    }

    /// Adds latency to every response of this broker.
    package func setBrokerRoundTripTime(_ brokerID: Int32, _ rtt: Duration) throws(KafkaError) {
        let err = rd_kafka_mock_broker_set_rtt(cluster, brokerID, Int32(rtt.milliseconds))
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: "broker \(brokerID) rtt") }
    }
}

extension Duration {
    /// Whole milliseconds, rounded down, as librdkafka's `*.ms` settings and timeouts want them.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }
}
