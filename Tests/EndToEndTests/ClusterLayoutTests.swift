import KSMLoad
import Testing

/// The controller `ksm broker` emulates on librdkafka's mock cluster, without a cluster.
@Suite struct ClusterLayoutTests {
    typealias Partition = ClusterLayout.Partition

    @Test("Leaders are spread over the first three brokers, the mock's replicas")
    func leadersSpreadOverReplicas() {
        var layout = ClusterLayout(brokers: 4)
        let moves = layout.addTopic("jobs", partitions: 6)
        #expect(layout.replicas == [1, 2, 3])
        #expect(moves.count == 6)
        #expect((0..<6).map { layout.leaders[Partition(topic: "jobs", partition: Int32($0))] } == [1, 2, 3, 1, 2, 3])
        #expect(layout.partitions(ledBy: 2) == [Partition(topic: "jobs", partition: 1), Partition(topic: "jobs", partition: 4)])
        #expect(layout.partitions(ledBy: 4).isEmpty)
    }

    @Test("A dead broker's partitions go to the next live replica and its groups to the next live broker; nothing else moves")
    func failoverMovesOnlyTheDeadBrokersLeadershipAndGroups() {
        var layout = ClusterLayout(brokers: 3)
        _ = layout.addTopic("jobs", partitions: 6)
        layout.setCoordinator(group: "workers", broker: 2)
        layout.setCoordinator(group: "readers", broker: 3)
        layout.markDown(2)
        let moves = layout.failover(from: 2)
        #expect(
            Set(moves) == [
                .leader(Partition(topic: "jobs", partition: 1), broker: 3),
                .leader(Partition(topic: "jobs", partition: 4), broker: 3),
                .coordinator(group: "workers", broker: 3),
            ])
        #expect(layout.partitions(ledBy: 2).isEmpty)
        #expect(layout.coordinators == ["workers": 3, "readers": 3])
        #expect(layout.partitions(ledBy: 1).count == 2)
    }

    @Test("With the next replica dead too, leadership wraps to a live one; with none live, the partition is offline (-1)")
    func failoverSkipsDeadReplicasAndLeavesNoneWhenAllAreDead() {
        var layout = ClusterLayout(brokers: 3)
        _ = layout.addTopic("jobs", partitions: 3)
        layout.markDown(3)
        #expect(layout.failover(from: 3) == [.leader(Partition(topic: "jobs", partition: 2), broker: 1)])
        layout.markDown(2)
        #expect(layout.failover(from: 2) == [.leader(Partition(topic: "jobs", partition: 1), broker: 1)])
        layout.markDown(1)
        layout.setCoordinator(group: "g", broker: 1)
        #expect(Set(layout.failover(from: 1)) == Set((0..<3).map { .leader(Partition(topic: "jobs", partition: Int32($0)), broker: -1) }))
        #expect(layout.coordinators["g"] == 1)
    }

    @Test("A broker back up leads nothing until leadership is moved to it")
    func leadershipStaysAfterTheBrokerReturns() {
        var layout = ClusterLayout(brokers: 3)
        _ = layout.addTopic("jobs", partitions: 3)
        layout.markDown(1)
        _ = layout.failover(from: 1)
        layout.markUp(1)
        #expect(layout.isLive(1))
        #expect(layout.partitions(ledBy: 1).isEmpty)
        #expect(layout.failover(from: 1).isEmpty)
    }
}
