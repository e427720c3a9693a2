/// The worker's recent answering rate (jobs per second over the last few seconds), from which the
/// scheduler predicts how long a new job would wait and how long to tell a shed client to back off.
struct ServiceRate: Sendable {
    private var samples: [(at: ContinuousClock.Instant, count: Int)] = []
    private let window: Duration = .seconds(5)
    let initial: Double

    init(initial: Double) { self.initial = max(initial, 1) }

    mutating func record(_ count: Int, at now: ContinuousClock.Instant = .now) {
        samples.append((now, count))
        let horizon = now - window
        if let keep = samples.firstIndex(where: { $0.at >= horizon }), keep > 0 { samples.removeFirst(keep) }
    }

    /// Jobs per second; the initial guess until a second of history exists.
    func perSecond(at now: ContinuousClock.Instant = .now) -> Double {
        guard let oldest = samples.first?.at else { return initial }
        let span = (now - oldest).seconds
        guard span >= 1 else { return initial }
        let total = samples.reduce(0) { $0 + $1.count }
        return max(Double(total) / span, 1)
    }
}
