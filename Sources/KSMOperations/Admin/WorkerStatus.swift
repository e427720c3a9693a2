import KSMService
import Wire

/// What `/status` answers: the worker's state as one JSON object, the channel tests, benchmarks and
/// scripts read instead of log lines (docs/operations.md lists the fields).
public struct WorkerStatus: Sendable, Hashable {
    /// What `/readyz` says (partitions owned, Redis up and provisioned).
    public var ready: Bool
    public var stalled: Bool
    public var assignedPartitions: Int
    /// Assignment changes so far (``WorkerStatistics/Snapshot/partitionChanges``).
    public var partitionChanges: Int
    public var received: Int
    public var replied: Int

    public init(ready: Bool, stalled: Bool, assignedPartitions: Int, partitionChanges: Int, received: Int, replied: Int) {
        self.ready = ready
        self.stalled = stalled
        self.assignedPartitions = assignedPartitions
        self.partitionChanges = partitionChanges
        self.received = received
        self.replied = replied
    }

    public var jsonBytes: [UInt8] {
        JSONValue.object([
            "ready": .bool(ready), "stalled": .bool(stalled), "assigned_partitions": .integer(Int64(assignedPartitions)),
            "partition_changes": .integer(Int64(partitionChanges)), "received": .integer(Int64(received)), "replied": .integer(Int64(replied)),
        ]).encoded()
    }

    /// Reads what ``jsonBytes`` wrote; nil for anything else.
    public init?(json: some Collection<UInt8>) {
        guard case .object(let o)? = try? JSONValue(parsing: json),
            case .bool(let ready)? = o["ready"], case .bool(let stalled)? = o["stalled"],
            case .integer(let assigned)? = o["assigned_partitions"], case .integer(let changes)? = o["partition_changes"],
            case .integer(let received)? = o["received"], case .integer(let replied)? = o["replied"]
        else { return nil }
        self.init(
            ready: ready, stalled: stalled, assignedPartitions: Int(assigned), partitionChanges: Int(changes), received: Int(received), replied: Int(replied))
    }
}
