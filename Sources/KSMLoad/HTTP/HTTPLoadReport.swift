/// What an HTTP load run measured: every request's end (a CKC that opened right, a wrong one, an
/// HTTP refusal by status, or no answer at all), the rate of correct CKCs, and the latency from each
/// request's intended send time. `allCorrect` is `ksm loadgen --http`'s exit criterion.
package struct HTTPLoadReport: Codable, Sendable {
    /// How requests were paced: `concurrency N` (closed loop) or `rate R/s` (open loop).
    package var pace = ""
    package var requests = 0
    /// Answers 200 whose CKC opened on the simulated device to exactly the catalogue's key and IV.
    package var correct = 0
    /// Answers 200 whose CKC was wrong, by reason (does not open, wrong key, no CKC in the shape).
    package var wrong: [String: Int] = [:]
    /// Final answers that were not 200, by HTTP status.
    package var errorsByStatus: [String: Int] = [:]
    /// Requests that ended with no HTTP answer (every attempt failed to connect or timed out).
    package var lost = 0
    /// Attempts beyond each request's first (a 503/504 or a lost connection, sent again with the
    /// same `X-Request-ID`, to the next URL when there are several).
    package var retries = 0
    /// Correct CKCs that came after the request's deadline (from its intended send time).
    package var late = 0
    /// Requests sent per shape.
    package var shapes: [String: Int] = [:]
    /// From the first intended send to the last answer.
    package var seconds: Double = 0
    /// Correct CKCs per second over ``seconds``.
    package var ckcPerSecond: Double = 0
    /// Correct CKCs per second between the 10th and the 90th percentile of their answers' times
    /// (``SteadyRate``): a closed loop's sustained rate, without its start and its drain.
    package var steadyCKCPerSecond: Double = 0
    /// From each request's intended send time (open loop: its arrival on the schedule, so a client
    /// that falls behind does not hide the wait) to its final answer; every request that got one.
    package var latencyMilliseconds = LoadReport.Latency(milliseconds: [])

    /// True when every request got a CKC that opened to the expected key.
    package var allCorrect: Bool { requests > 0 && correct == requests && wrong.isEmpty && lost == 0 }

    enum CodingKeys: String, CodingKey {
        case pace, requests, correct, wrong, lost, retries, late, shapes, seconds
        case errorsByStatus = "errors_by_status"
        case ckcPerSecond = "ckc_per_second"
        case steadyCKCPerSecond = "steady_ckc_per_second"
        case latencyMilliseconds = "latency_ms"
        case allCorrect = "all_correct"
    }

    package init() {}

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(pace, forKey: .pace)
        try c.encode(requests, forKey: .requests)
        try c.encode(correct, forKey: .correct)
        try c.encode(wrong, forKey: .wrong)
        try c.encode(errorsByStatus, forKey: .errorsByStatus)
        try c.encode(lost, forKey: .lost)
        try c.encode(retries, forKey: .retries)
        try c.encode(late, forKey: .late)
        try c.encode(shapes, forKey: .shapes)
        try c.encode(seconds, forKey: .seconds)
        try c.encode(ckcPerSecond, forKey: .ckcPerSecond)
        try c.encode(steadyCKCPerSecond, forKey: .steadyCKCPerSecond)
        try c.encode(latencyMilliseconds, forKey: .latencyMilliseconds)
        try c.encode(allCorrect, forKey: .allCorrect)
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        pace = try c.decode(String.self, forKey: .pace)
        requests = try c.decode(Int.self, forKey: .requests)
        correct = try c.decode(Int.self, forKey: .correct)
        wrong = try c.decode([String: Int].self, forKey: .wrong)
        errorsByStatus = try c.decode([String: Int].self, forKey: .errorsByStatus)
        lost = try c.decode(Int.self, forKey: .lost)
        retries = try c.decode(Int.self, forKey: .retries)
        late = try c.decode(Int.self, forKey: .late)
        shapes = try c.decode([String: Int].self, forKey: .shapes)
        seconds = try c.decode(Double.self, forKey: .seconds)
        ckcPerSecond = try c.decode(Double.self, forKey: .ckcPerSecond)
        steadyCKCPerSecond = try c.decode(Double.self, forKey: .steadyCKCPerSecond)
        latencyMilliseconds = try c.decode(LoadReport.Latency.self, forKey: .latencyMilliseconds)
    }
}
