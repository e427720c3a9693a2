/// The worker's processing capacity in jobs per second, from its recent batches, from which the
/// scheduler predicts how long a new job would wait and how long to tell a shed client to back off.
///
/// Capacity, not the answering rate: an idle or starved worker answers few jobs per second but could
/// answer many. Each batch contributes its job count and how long processing it took (taken to
/// answered, publishing excluded, so a Kafka outage does not read as slow processing); with
/// `concurrency` batches in flight at once, capacity = jobs / processing time x concurrency over the
/// last few seconds. Under saturation that is the true rate; below it, an overestimate, which only
/// makes shedding less eager.
///
/// The window ends at the newest batch, not at now: an idle spell does not make the worker forget
/// what it can do, so the first jobs of the next storm are judged by the last measured capacity.
/// Before any batch was measured the rate is unknown (nil, unless an initial guess is configured)
/// and nothing is shed: a guess that is too low told early storm jobs to come back a minute later
/// while the worker drained the whole storm in seconds.
struct ServiceRate: Sendable {
    private var samples: [(at: ContinuousClock.Instant, jobs: Int, seconds: Double)] = []
    private let window: Duration = .seconds(5)
    let initial: Double?
    let concurrency: Int

    init(initial: Double? = nil, concurrency: Int = 1) {
        self.initial = initial.map { max($0, 1) }
        self.concurrency = max(concurrency, 1)
    }

    /// Records a processed batch: `jobs` jobs in `processing`.
    mutating func record(jobs: Int, processing: Duration, at now: ContinuousClock.Instant = .now) {
        guard jobs > 0 else { return }
        samples.append((now, jobs, max(processing.seconds, 0.000_001)))
        let horizon = now - window
        if let keep = samples.firstIndex(where: { $0.at >= horizon }), keep > 0 { samples.removeFirst(keep) }
    }

    /// Jobs per second over the window that ends at the newest batch; the initial guess (nil by
    /// default) before any batch was measured.
    var perSecond: Double? {
        guard !samples.isEmpty else { return initial }
        let jobs = samples.reduce(0) { $0 + $1.jobs }
        let seconds = samples.reduce(0) { $0 + $1.seconds }
        return max(Double(jobs) / seconds * Double(concurrency), 1)
    }
}
