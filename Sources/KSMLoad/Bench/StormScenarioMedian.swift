/// One scenario's figures over its repeated storms (`ksm bench storm --repeat N`): the median of
/// each ratio, so a single storm in a slow phase of a shared host neither makes nor breaks a bar.
package struct StormScenarioMedian: Codable, Sendable, Equatable {
    /// The labels of the storms it was taken over, in the order they ran.
    package var runs: [String]
    package var drainSeconds: Double
    package var drainOverIdeal: Double
    package var newDrainOverIdeal: Double?
    package var continuityP99OverIdeal: Double?

    enum CodingKeys: String, CodingKey {
        case runs
        case drainSeconds = "drain_seconds"
        case drainOverIdeal = "drain_over_ideal"
        case newDrainOverIdeal = "new_drain_over_ideal"
        case continuityP99OverIdeal = "continuity_p99_over_ideal"
    }

    /// The middle value (the mean of the middle two for an even count); nil for no values.
    package static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        let value = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        return (value * 1000).rounded() / 1000
    }
}
