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
/// what it can do, so the first jobs of the next storm are judged by the last measured capacity,
/// for up to ``maximumAge``. The estimate is only used once it rests on enough work
/// (``minimumJobs`` jobs or ``minimumSeconds`` of processing in the window): the first batches of a
/// storm are small and slow (cold connections, cache misses), and one of 5 jobs in 300 ms read as
/// 67 jobs/s, which told a storm's new sessions to come back a minute later. Until then the rate is
/// unknown (nil, unless an initial guess is configured) and nothing is shed.
struct ServiceRate: Sendable {
    private var samples: [(at: ContinuousClock.Instant, jobs: Int, seconds: Double)] = []
    private let window: Duration = .seconds(5)
    /// A capacity measured longer ago than this is forgotten (the machine or its load may have changed).
    static let maximumAge: Duration = .seconds(60)
    /// Jobs, or seconds of batch processing, the window must hold before the estimate is used.
    static let minimumJobs = 256
    static let minimumSeconds = 2.0
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
    /// default) while the window holds too little work or is older than ``maximumAge``.
    func perSecond(at now: ContinuousClock.Instant = .now) -> Double? {
        guard let newest = samples.last, now - newest.at <= Self.maximumAge else { return initial }
        let jobs = samples.reduce(0) { $0 + $1.jobs }
        let seconds = samples.reduce(0) { $0 + $1.seconds }
        guard jobs >= Self.minimumJobs || seconds >= Self.minimumSeconds else { return initial }
        return max(Double(jobs) / seconds * Double(concurrency), 1)
    }
}
