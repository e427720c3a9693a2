import Synchronization

/// Counters a worker keeps for logs, tests and the loadgen summary.
public final class WorkerStatistics: Sendable {
    public struct Snapshot: Sendable, Hashable {
        public var received = 0
        public var replied = 0
        public var deadLettered = 0
        public var batches = 0
        public var storeRetries = 0
        public var publishRetries = 0
        public var pauses = 0
        /// Partitions this worker owns now; readiness means at least one.
        public var assignedPartitions = 0
        /// Replies published, by status name (low cardinality: Apple's and the project's codes).
        public var repliesByStatus: [String: Int] = [:]
        /// Jobs received and not yet answered or dead-lettered (revoked ones included until redone).
        public var inFlight: Int { max(0, received - replied - deadLettered) }
    }

    private let state = Mutex(Snapshot())

    public init() {}

    public var snapshot: Snapshot { state.withLock { $0 } }

    func update(_ change: (inout Snapshot) -> Void) { state.withLock { change(&$0) } }
}
