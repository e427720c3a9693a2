import KSMService
import Wire

/// What `/status` answers: the worker's state as one JSON object, the channel tests, benchmarks and
/// scripts read instead of log lines (docs/operations.md lists the fields).
package struct WorkerStatus: Sendable, Hashable {
    /// What `/readyz` says (partitions owned, Redis up and provisioned).
    package var ready: Bool
    package var stalled: Bool
    package var assignedPartitions: Int
    /// Assignment changes so far (``WorkerStatistics/Snapshot/partitionChanges``).
    package var partitionChanges: Int
    package var received: Int
    package var replied: Int

    package init(ready: Bool, stalled: Bool, assignedPartitions: Int, partitionChanges: Int, received: Int, replied: Int) {
        self.ready = ready
        self.stalled = stalled
        self.assignedPartitions = assignedPartitions
        self.partitionChanges = partitionChanges
        self.received = received
        self.replied = replied
    }

    package var jsonBytes: [UInt8] {
        JSONValue.object([
            "ready": .bool(ready), "stalled": .bool(stalled), "assigned_partitions": .integer(Int64(assignedPartitions)),
            "partition_changes": .integer(Int64(partitionChanges)), "received": .integer(Int64(received)), "replied": .integer(Int64(replied)),
        ]).encoded()
    }

    /// Reads what ``jsonBytes`` wrote; nil for anything else.
    package init?(json: some Collection<UInt8>) {
        guard case .object(let o)? = try? JSONValue(parsing: json),
            case .bool(let ready)? = o["ready"], case .bool(let stalled)? = o["stalled"],
            case .integer(let assigned)? = o["assigned_partitions"], case .integer(let changes)? = o["partition_changes"],
            case .integer(let received)? = o["received"], case .integer(let replied)? = o["replied"]
        else { return nil }
        self.init(
            ready: ready, stalled: stalled, assignedPartitions: Int(assigned), partitionChanges: Int(changes), received: Int(received), replied: Int(replied))
    }
}
