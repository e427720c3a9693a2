import Kafka

/// Where a Kafka offset is stored: only after the reply's delivery report, and only up to the
/// highest offset below which every message of that partition is finished.
///
/// Batches finish out of order (two run at once), and storing offset N commits everything below N,
/// so a finished message may have to wait for an older one still in flight. Value type; the worker
/// keeps it inside its state actor.
struct OffsetTracker: Sendable {
    private struct PartitionState: Sendable {
        /// Received, not yet finished.
        var inFlight: Set<Int64> = []
        /// Highest finished offset so far.
        var highestFinished: Int64 = -1
        /// Highest offset handed to `storeOffset` (the message's own offset).
        var stored: Int64 = -1
    }

    private var partitions: [TopicPartition: PartitionState] = [:]

    /// Records a message received for processing.
    mutating func received(_ partition: TopicPartition, offset: Int64) {
        partitions[partition, default: PartitionState()].inFlight.insert(offset)
    }

    /// Records a message finished (its reply delivered) and returns the offset that may now be
    /// stored for its partition, if it moved forward.
    mutating func finished(_ partition: TopicPartition, offset: Int64) -> Int64? {
        guard var state = partitions[partition], state.inFlight.remove(offset) != nil else { return nil }
        state.highestFinished = max(state.highestFinished, offset)
        let storable = state.inFlight.min().map { $0 - 1 } ?? state.highestFinished
        defer { partitions[partition] = state }
        guard storable > state.stored else { return nil }
        state.stored = storable
        return storable
    }

    /// Forgets revoked partitions: their in-flight messages will be redone by the new owner.
    mutating func revoke(_ revoked: [TopicPartition]) {
        for partition in revoked { partitions[partition] = nil }
    }

    /// Messages received and not finished, across partitions.
    var inFlightCount: Int { partitions.values.reduce(0) { $0 + $1.inFlight.count } }
}
