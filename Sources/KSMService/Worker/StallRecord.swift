import Kafka
import Synchronization

/// The consumer's watchdog verdict, shared by its stall callback (on the poll thread) and the
/// worker's liveness check. A class of its own, so the callback holds the record, not the worker.
final class StallRecord: Sendable {
    private let stall = Mutex<KafkaConsumer.Watchdog.Stall?>(nil)

    func record(_ value: KafkaConsumer.Watchdog.Stall) { stall.withLock { $0 = value } }

    /// True once the watchdog saw the processing loop stall.
    var isStalled: Bool { stall.withLock { $0 != nil } }
}
