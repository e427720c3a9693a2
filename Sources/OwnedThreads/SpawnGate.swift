import Synchronization

/// One child process spawned at a time in this process, and nothing that must not be copied into a
/// child while one is being spawned.
///
/// Why: between the clone and the exec of a spawn, the child holds a copy of every descriptor of
/// this process, close-on-exec ones included, while Foundation closes hundreds of others one by one.
/// A mock Kafka broker set down in that window closes its listener and binds the port again at once;
/// the child's copy still listens, the bind fails, and librdkafka 2.0.2 aborts the whole process
/// (`rd_kafka_mock_broker_cmd`). `posix_spawn` returns only once the child has exec'd. Every spawn
/// (`ProcessRunner`, `RedisServerProcess`, `RunningProcess`) holds this gate, and
/// `KafkaMockCluster.setBrokerDown` holds it inside, so no caller of it (a test, `BrokerControl`)
/// has to remember to.
package enum SpawnGate {
    private static let gate = Mutex(())

    /// Runs `body` (a spawn, or a mock broker's down) while no spawn is in flight. Not re-entrant:
    /// `body` must not spawn or set a broker down itself.
    package static func holding<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try gate.withLock { _ throws(E) in try body() }
    }
}
