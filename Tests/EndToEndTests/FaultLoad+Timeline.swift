import Kafka

/// When replies arrived, by reply-topic partition: what a broker failover is measured with (a killed
/// broker's partitions go quiet until their leadership moves, the others should not).
extension FaultLoad {
    /// Arrival times of every reply (retriable ones too) on `partitions` of the reply topic, or on
    /// all partitions when nil, in order.
    func arrivalTimes(onPartitions partitions: Set<Int32>? = nil) -> [ContinuousClock.Instant] {
        state.withLock { state in
            state.arrivals.values.joined().filter { partitions?.contains($0.partition) ?? true }.map(\.at).sorted()
        }
    }

    /// The first reply on `partitions` that arrived at or after `instant`.
    func firstArrival(onPartitions partitions: Set<Int32>, atOrAfter instant: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        arrivalTimes(onPartitions: partitions).first { $0 >= instant }
    }

    /// Replies on `partitions` that arrived in `window`.
    func arrivals(onPartitions partitions: Set<Int32>, in window: Range<ContinuousClock.Instant>) -> Int {
        arrivalTimes(onPartitions: partitions).filter { window.contains($0) }.count
    }

    /// The reply topic's log end offset on each of `partitions` now, from the broker; a partition it
    /// did not answer for is left out.
    func replyLogEnds(_ partitions: Set<Int32>) async -> [Int32: Int64] {
        let ends = await consumer.logEndOffsets(partitions.map { TopicPartition(topic: "fps.license.replies", partition: $0) })
        return Dictionary(uniqueKeysWithValues: ends.map { ($0.key.partition, $0.value) })
    }

    /// Replies on `partitions` that arrived in `window` and were written at or after `ends` (offsets
    /// from ``replyLogEnds(_:)``; every offset counts on a partition missing there). A reply written
    /// before that moment but read late, by a reader the test process's load held up, is not one.
    func arrivals(onPartitions partitions: Set<Int32>, in window: Range<ContinuousClock.Instant>, writtenFrom ends: [Int32: Int64]) -> Int {
        state.withLock { state in
            state.arrivals.values.joined().filter { arrival in
                partitions.contains(arrival.partition) && window.contains(arrival.at) && arrival.offset >= ends[arrival.partition, default: 0]
            }.count
        }
    }

    /// The longest stretch after `start` in which no reply arrived on any partition (from `start`
    /// or a reply to the next reply).
    func longestSilence(after start: ContinuousClock.Instant) -> Duration {
        var previous = start
        var longest = Duration.zero
        for at in arrivalTimes() where at > start {
            longest = max(longest, at - previous)
            previous = at
        }
        return longest
    }
}
