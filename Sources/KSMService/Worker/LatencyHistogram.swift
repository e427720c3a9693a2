/// A histogram with fixed bucket bounds, kept as plain counts so a batch can fill a local copy and
/// merge it under one lock (`merge`), instead of taking a lock per observation.
///
/// The worker's accumulator: ``WorkerMetrics`` moves what was added since its last publish into a
/// swift-metrics `Timer` with the same bounds (``replay(since:_:)``), off the hot path.
package struct LatencyHistogram: Sendable, Hashable {
    /// Upper bounds in seconds of every latency histogram. From 1 ms (a cache-hit batch, a job
    /// alone) to 30 s (the new-session wait limit), dense from 0.5 s to 2.5 s, where a live event's
    /// p99 target sits: with 1 s -> 2.5 s and nothing between, `KSMLatencyP99OverTarget` (2 s)
    /// interpolated a p99 of 2.2 s when the real one was 1.13 s. Below 100 ms for the same reason:
    /// an HTTP edge's answer at moderate load takes tens of milliseconds, and with 50 -> 100 ms and
    /// nothing between a p99 of 55 ms and one of 95 ms would read the same.
    package static let bounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 2.5, 5, 10, 30]

    /// Observations per bucket (not cumulative); the last entry is the +Inf bucket.
    package private(set) var counts = [Int](repeating: 0, count: Self.bounds.count + 1)
    /// Sum of the observations per bucket, in seconds: the mean of a bucket's new observations lies
    /// inside that bucket, so replaying it keeps every bucket count and the total sum.
    package private(set) var sums = [Double](repeating: 0, count: Self.bounds.count + 1)
    package private(set) var sum: Double = 0
    package private(set) var count = 0

    package init() {}

    package mutating func observe(seconds: Double) {
        let index = Self.bounds.firstIndex { seconds <= $0 } ?? Self.bounds.count
        counts[index] += 1
        sums[index] += seconds
        sum += seconds
        count += 1
    }

    package mutating func observe(_ duration: Duration) {
        let (s, attoseconds) = duration.components
        observe(seconds: Double(s) + Double(attoseconds) / 1e18)
    }

    package mutating func merge(_ other: LatencyHistogram) {
        for index in counts.indices {
            counts[index] += other.counts[index]
            sums[index] += other.sums[index]
        }
        sum += other.sum
        count += other.count
    }

    /// The cumulative counts Prometheus expects, paired with their `le` label.
    package var cumulative: [(le: String, count: Int)] {
        var running = 0
        var out: [(String, Int)] = []
        for (index, n) in counts.enumerated() {
            running += n
            out.append((index < Self.bounds.count ? Self.format(Self.bounds[index]) : "+Inf", running))
        }
        return out
    }

    /// Calls `record` with nanosecond values whose bucket counts equal what this histogram gained
    /// since `earlier`, and whose sum equals the sum gained (to a nanosecond per observation): each
    /// bucket's new observations are replayed at their mean, clamped into the bucket.
    package func replay(since earlier: LatencyHistogram, _ record: (Int64) -> Void) {
        for index in counts.indices {
            let n = counts[index] - earlier.counts[index]
            guard n > 0 else { continue }
            let lower = index == 0 ? Int64(0) : Self.nanoseconds(Self.bounds[index - 1]) + 1
            let upper = index < Self.bounds.count ? Self.nanoseconds(Self.bounds[index]) : Int64.max
            let mean = Self.nanoseconds((sums[index] - earlier.sums[index]) / Double(n))
            let value = min(max(mean, lower), upper)
            for _ in 0..<n { record(value) }
        }
    }

    /// `seconds` as a `Duration` rounded to the nanosecond (the bounds of the exported histogram).
    package static func duration(seconds: Double) -> Duration { .nanoseconds(nanoseconds(seconds)) }

    static func nanoseconds(_ seconds: Double) -> Int64 {
        let ns = (seconds * 1e9).rounded()
        return ns >= Double(Int64.max) ? Int64.max : Int64(max(0, ns))
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
