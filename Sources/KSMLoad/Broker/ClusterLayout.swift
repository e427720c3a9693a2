/// Who leads each partition and coordinates each group on `ksm broker`'s mock cluster, kept the way
/// a real cluster's controller keeps it, because librdkafka 2.0.2's mock has no controller: a broker
/// set down keeps leading its partitions and coordinating its groups, so clients would wait for it
/// forever. `failover(from:)` computes what a controller does once a dead broker's session expired:
/// every partition it led gets the next live replica as leader, every group it coordinated the next
/// live broker.
///
/// The mock cannot be asked who leads what (it picks a random replica at topic creation and hashes
/// group names to brokers), so `ksm broker` places every leader itself (``addTopic(_:partitions:)``)
/// and tracks only the groups whose coordinator was placed with ``setCoordinator(group:broker:)``.
package struct ClusterLayout: Sendable, Equatable {
    /// One partition of one topic.
    package struct Partition: Hashable, Sendable, Comparable, CustomStringConvertible {
        package var topic: String
        package var partition: Int32

        package init(topic: String, partition: Int32) {
            self.topic = topic
            self.partition = partition
        }

        package static func < (a: Partition, b: Partition) -> Bool {
            (a.topic, a.partition) < (b.topic, b.partition)
        }

        package var description: String { "\(topic)/\(partition)" }
    }

    /// One change the layout asks of the mock cluster.
    package enum Move: Hashable, Sendable {
        /// The partition's leader becomes `broker` (-1: none, no live replica is left).
        case leader(Partition, broker: Int32)
        /// The group's coordinator becomes `broker`.
        case coordinator(group: String, broker: Int32)
    }

    /// Broker IDs, 1...n, in the mock's list order.
    package let brokers: [Int32]
    /// Every partition's replicas, in preference order. The mock gives every partition the first
    /// `min(3, n)` brokers whatever replication factor a topic is created with, and reports them all
    /// as in sync, so this is what a leader can move to.
    package let replicas: [Int32]
    package private(set) var leaders: [Partition: Int32] = [:]
    package private(set) var coordinators: [String: Int32] = [:]
    package private(set) var down: Set<Int32> = []

    package init(brokers: Int) {
        self.brokers = (0..<Int32(max(brokers, 0))).map { $0 + 1 }
        self.replicas = Array(self.brokers.prefix(3))
    }

    /// Places a new topic's leaders: partition p on the (p mod replicas)-th replica, so every
    /// replica leads some partitions and a killed broker always takes some leadership with it.
    package mutating func addTopic(_ topic: String, partitions: Int) -> [Move] {
        guard !replicas.isEmpty else { return [] }
        return (0..<Int32(max(partitions, 0))).map { p in
            let partition = Partition(topic: topic, partition: p)
            let leader = replicas[Int(p) % replicas.count]
            leaders[partition] = leader
            return .leader(partition, broker: leader)
        }
    }

    /// Records a leader placed by hand (`partition-leader`).
    package mutating func setLeader(_ partition: Partition, broker: Int32) {
        leaders[partition] = broker
    }

    /// Records a coordinator placed by hand (`coordinator`); from now on the group is tracked.
    package mutating func setCoordinator(group: String, broker: Int32) {
        coordinators[group] = broker
    }

    package mutating func markDown(_ broker: Int32) { down.insert(broker) }
    package mutating func markUp(_ broker: Int32) { down.remove(broker) }

    package func isLive(_ broker: Int32) -> Bool { brokers.contains(broker) && !down.contains(broker) }

    /// The partitions `broker` leads now, in order.
    package func partitions(ledBy broker: Int32) -> [Partition] {
        leaders.filter { $0.value == broker }.map(\.key).sorted()
    }

    /// Moves everything `broker` leads or coordinates to live brokers and returns the moves, as a
    /// controller does once the broker's session expired. A partition goes to its next live replica
    /// after `broker` in preference order (-1 if none is live: with unclean election off, a real
    /// cluster leaves it offline too); a group to the next live broker after `broker` (it stays if
    /// none is live). Leadership does not return when the broker comes back up.
    package mutating func failover(from broker: Int32) -> [Move] {
        var moves: [Move] = []
        for partition in partitions(ledBy: broker) {
            let next = Self.next(after: broker, in: replicas, where: isLive) ?? -1
            leaders[partition] = next
            moves.append(.leader(partition, broker: next))
        }
        for (group, coordinator) in coordinators.sorted(by: { $0.key < $1.key }) where coordinator == broker {
            guard let next = Self.next(after: broker, in: brokers, where: isLive) else { continue }
            coordinators[group] = next
            moves.append(.coordinator(group: group, broker: next))
        }
        return moves
    }

    /// The first element after `element` in `ring` (wrapping round) that satisfies `condition`.
    private static func next(after element: Int32, in ring: [Int32], where condition: (Int32) -> Bool) -> Int32? {
        guard !ring.isEmpty else { return nil }
        let start = ring.firstIndex(of: element) ?? -1
        for step in 1...ring.count {
            let candidate = ring[(start + step + ring.count) % ring.count]
            if candidate != element, condition(candidate) { return candidate }
        }
        return nil
    }
}
