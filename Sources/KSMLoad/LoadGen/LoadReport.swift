import KSMService

/// What a load run measured. `allCorrect` is the exit criterion of `ksm loadgen` and `ksm demo`.
package struct LoadReport: Codable, Sendable {
    package struct Latency: Codable, Sendable {
        package var p50: Double
        package var p90: Double
        package var p99: Double
        package var max: Double

        /// Percentiles (milliseconds) of a set of samples; zeros when empty.
        package init(milliseconds samples: [Double]) {
            let sorted = samples.sorted()
            // Nearest-rank percentile, rounded to 0.1 ms.
            func at(_ q: Double) -> Double {
                guard !sorted.isEmpty else { return 0 }
                let rank = Swift.max(0, Int((Double(sorted.count) * q).rounded(.up)) - 1)
                return (sorted[Swift.min(rank, sorted.count - 1)] * 10).rounded() / 10
            }
            p50 = at(0.50)
            p90 = at(0.90)
            p99 = at(0.99)
            max = ((sorted.last ?? 0) * 10).rounded() / 10
        }
    }

    package var sent = 0
    package var replies = 0
    /// Replies whose CKC opened on the simulated device with exactly the expected key and IV.
    package var correct = 0
    /// Replies that were wrong (bad status, CKC that does not open, wrong key), by reason.
    package var wrong: [String: Int] = [:]
    package var missing = 0
    package var duplicates = 0
    package var statuses: [String: Int] = [:]
    package var seconds: Double = 0
    package var repliesPerSecond: Double = 0
    package var latencyMilliseconds = Latency(milliseconds: [])
    /// Latency of the rotation bursts alone.
    package var burstLatencyMilliseconds = Latency(milliseconds: [])
    package var burstDrainSeconds: Double = 0

    package var allCorrect: Bool { sent > 0 && correct == sent && missing == 0 && wrong.isEmpty }

    enum CodingKeys: String, CodingKey {
        case sent, replies, correct, wrong, missing, duplicates, statuses, seconds
        case repliesPerSecond = "replies_per_second"
        case latencyMilliseconds = "latency_ms"
        case burstLatencyMilliseconds = "burst_latency_ms"
        case burstDrainSeconds = "burst_drain_seconds"
        case allCorrect = "all_correct"
    }

    package init() {}

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(sent, forKey: .sent)
        try c.encode(replies, forKey: .replies)
        try c.encode(correct, forKey: .correct)
        try c.encode(wrong, forKey: .wrong)
        try c.encode(missing, forKey: .missing)
        try c.encode(duplicates, forKey: .duplicates)
        try c.encode(statuses, forKey: .statuses)
        try c.encode(seconds, forKey: .seconds)
        try c.encode(repliesPerSecond, forKey: .repliesPerSecond)
        try c.encode(latencyMilliseconds, forKey: .latencyMilliseconds)
        try c.encode(burstLatencyMilliseconds, forKey: .burstLatencyMilliseconds)
        try c.encode(burstDrainSeconds, forKey: .burstDrainSeconds)
        try c.encode(allCorrect, forKey: .allCorrect)
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        sent = try c.decode(Int.self, forKey: .sent)
        replies = try c.decode(Int.self, forKey: .replies)
        correct = try c.decode(Int.self, forKey: .correct)
        wrong = try c.decode([String: Int].self, forKey: .wrong)
        missing = try c.decode(Int.self, forKey: .missing)
        duplicates = try c.decode(Int.self, forKey: .duplicates)
        statuses = try c.decode([String: Int].self, forKey: .statuses)
        seconds = try c.decode(Double.self, forKey: .seconds)
        repliesPerSecond = try c.decode(Double.self, forKey: .repliesPerSecond)
        latencyMilliseconds = try c.decode(Latency.self, forKey: .latencyMilliseconds)
        burstLatencyMilliseconds = try c.decode(Latency.self, forKey: .burstLatencyMilliseconds)
        burstDrainSeconds = try c.decode(Double.self, forKey: .burstDrainSeconds)
    }
}
