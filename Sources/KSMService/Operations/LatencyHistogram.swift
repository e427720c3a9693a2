/// A Prometheus histogram with fixed bucket bounds, kept as plain counts so a batch can fill a local
/// copy and merge it under one lock (`merge`), instead of taking a lock per observation.
public struct LatencyHistogram: Sendable, Hashable {
    /// Upper bounds in seconds. From 5 ms (a cache-hit batch) to 30 s (the new-session wait limit),
    /// dense around the 0.1-2.5 s a live event's p99 target sits in.
    public static let bounds: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

    /// Observations per bucket (not cumulative); the last entry is the +Inf bucket.
    public private(set) var counts = [Int](repeating: 0, count: LatencyHistogram.bounds.count + 1)
    public private(set) var sum: Double = 0
    public private(set) var count = 0

    public init() {}

    public mutating func observe(seconds: Double) {
        let index = Self.bounds.firstIndex { seconds <= $0 } ?? Self.bounds.count
        counts[index] += 1
        sum += seconds
        count += 1
    }

    public mutating func observe(_ duration: Duration) {
        let (s, attoseconds) = duration.components
        observe(seconds: Double(s) + Double(attoseconds) / 1e18)
    }

    public mutating func merge(_ other: LatencyHistogram) {
        for index in counts.indices { counts[index] += other.counts[index] }
        sum += other.sum
        count += other.count
    }

    /// The cumulative counts Prometheus expects, paired with their `le` label.
    public var cumulative: [(le: String, count: Int)] {
        var running = 0
        var out: [(String, Int)] = []
        for (index, n) in counts.enumerated() {
            running += n
            out.append((index < Self.bounds.count ? Self.format(Self.bounds[index]) : "+Inf", running))
        }
        return out
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
