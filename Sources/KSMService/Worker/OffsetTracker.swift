import DequeModule
import Kafka

/// Where a Kafka offset is stored: only after the reply's delivery report, and only up to the
/// highest offset below which every message of that partition is finished.
///
/// Batches finish out of order (several run at once), and storing offset N commits everything below
/// N, so a finished message may have to wait for an older one still in flight. Messages of a
/// partition arrive in offset order, so each partition keeps its in-flight offsets as an ascending
/// queue: finishing is amortized O(1) even with thousands in flight during a burst. Value type; the
/// worker keeps it inside its state actor.
struct OffsetTracker: Sendable {
    private struct PartitionState: Sendable {
        /// Received offsets not yet released, ascending; the oldest first.
        var pending = Deque<Int64>()
        /// Finished offsets still behind an unfinished older one.
        var finishedAhead: Set<Int64> = []
        /// Highest offset handed to `storeOffset` (the message's own offset).
        var stored: Int64 = -1

        mutating func insert(_ offset: Int64) {
            if let last = pending.last, last >= offset {
                // Out of order (a seek): keep the queue sorted; rare, so a linear insert is fine.
                let at = pending.firstIndex { $0 >= offset } ?? pending.count
                if at < pending.count, pending[at] == offset { return }
                pending.insert(offset, at: at)
            } else {
                pending.append(offset)
            }
        }

        /// Releases finished offsets from the front; returns the highest one released, if any.
        mutating func releaseFront() -> Int64? {
            var released: Int64?
            while let oldest = pending.first, finishedAhead.remove(oldest) != nil {
                released = pending.popFirst()
            }
            return released
        }

        /// Marks `offset` finished. `counted` is false when it was not in flight (already finished,
        /// or from before a revocation); `store` is the offset that may now be stored, if it moved.
        mutating func finish(_ offset: Int64) -> (counted: Bool, store: Int64?) {
            guard isPending(offset), finishedAhead.insert(offset).inserted else { return (false, nil) }
            guard let released = releaseFront(), released > stored else { return (true, nil) }
            stored = released
            return (true, released)
        }

        /// Received and not finished.
        var inFlightCount: Int { pending.count - finishedAhead.count }

        /// Whether `offset` is received and not yet released (binary search: `pending` is sorted).
        func isPending(_ offset: Int64) -> Bool {
            let items = pending
            var low = items.startIndex
            var high = items.endIndex
            while low < high {
                let mid = (low + high) / 2
                if items[mid] < offset { low = mid + 1 } else { high = mid }
            }
            return low < items.endIndex && items[low] == offset
        }
    }

    private var partitions: [TopicPartition: PartitionState] = [:]
    /// Messages received and not finished, across partitions.
    private(set) var inFlightCount = 0

    /// Records a message received for processing.
    mutating func received(_ partition: TopicPartition, offset: Int64) {
        let before = partitions[partition]?.inFlightCount ?? 0
        partitions[partition, default: PartitionState()].insert(offset)
        inFlightCount += (partitions[partition]?.inFlightCount ?? 0) - before
    }

    /// Records a message finished (its reply delivered) and returns the offset that may now be
    /// stored for its partition, if it moved forward.
    mutating func finished(_ partition: TopicPartition, offset: Int64) -> Int64? {
        guard partitions[partition] != nil else { return nil }
        // In place through the dictionary's accessor: a copy of the state taken out and written
        // back shares its set and queue, so each finish copied both (thousands of offsets in a storm).
        let (counted, store) = partitions[partition, default: PartitionState()].finish(offset)
        if counted { inFlightCount -= 1 }
        return store
    }

    /// Forgets revoked partitions: their in-flight messages will be redone by the new owner.
    mutating func revoke(_ revoked: [TopicPartition]) {
        for partition in revoked {
            if let state = partitions.removeValue(forKey: partition) { inFlightCount -= state.inFlightCount }
        }
    }
}
