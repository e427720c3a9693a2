import KSMService

/// What `ksm bench e2e` measured while its fleet ran: the figures the report is made of, taken before
/// the fleet stops.
struct EndToEndMeasurement: Sendable {
    /// CPU spent by every process of the benchmark between the first send and the last reply.
    var cpuSpent: CPUAccount
    var wall: Double
    /// Each reply's bytes and arrival, by correlation ID.
    var replies: [String: ([UInt8], ContinuousClock.Instant)]
    var start: ContinuousClock.Instant
    var end: ContinuousClock.Instant
    /// Each reply's arrival, in seconds after the first send, sorted.
    var arrivals: [Double]
    /// Replies per second from the first send to the last reply.
    var rate: Double
    /// Replies per second between the 10th and the 90th percentile of arrivals.
    var steadyRate: Double
}
