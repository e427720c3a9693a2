import DequeModule

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
/// for up to ``maximumAge``. An estimate is only made once the window rests on enough work
/// (``minimumJobs`` jobs or ``minimumSeconds`` of processing): the first batches of a storm are
/// small and slow (cold connections, cache misses), and one of 5 jobs in 300 ms read as 67 jobs/s,
/// which told a storm's new sessions to come back a minute later. Until then the rate is unknown
/// (nil, unless an initial guess is configured) and nothing is shed; once made, an estimate stands
/// until a window with enough work replaces it or it grows older than ``maximumAge``.
///
/// A store outage is not a loss of capacity. A batch that met a failing store (``recordStoreFailure(at:)``)
/// spent its time in retry sleeps, connection and `WAIT` timeouts, not in work, and counting it read
/// a Redis Cluster failover (8 s of `WAIT` timeouts) as a worker that serves a few jobs a second:
/// new sessions were shed with a minute's retry-after while the worker, once the store was back,
/// drained its backlog in seconds. Such a batch is therefore no sample; it keeps the last estimate
/// alive (the outage does not age it) and starts a new window, and after it only a window of
/// ``minimumJobs`` jobs replaces the estimate: the first batches after the store comes back are the
/// slow cold ones again (reconnects, scripts loaded anew, a cluster client still following the
/// failover), and a couple of them already hold ``minimumSeconds`` of processing.
///
/// A store can also stall without failing: a cluster client follows a failover inside one call,
/// retrying for seconds until the replica has taken over, and the batch then succeeds. A batch that
/// took more than ``stallFactor`` times what the estimate predicts for its jobs, and
/// ``stallMargin`` more, waited on something other than work, and is treated as a stall: no sample,
/// and the estimate stands (measured: without this, a master killed under load read as about 10 jobs/s
/// and 34 new sessions were told to come back after 15-34 s, though only two jobs of 1,500 were
/// answered `storeUnavailable` and the backlog cleared in 1.4 s). A stall does not refresh the estimate's age, so a worker that really became
/// that much slower has its estimate forgotten after ``maximumAge`` and measured afresh; until then it
/// sheds less than it could, never more.
///
/// The window keeps running totals of its jobs and seconds, so a batch costs the same however many
/// batches the window holds: at moderate load a worker runs a batch per job or two, and summing a
/// five-second window of them on every batch grew with the square of the rate.
struct ServiceRate: Sendable {
    private var samples: Deque<(at: ContinuousClock.Instant, jobs: Int, seconds: Double)> = []
    /// Sums over ``samples``.
    private var windowJobs = 0
    private var windowSeconds = 0.0
    /// The last estimate made from a window with enough work, and when it was last confirmed (by
    /// that window's newest batch, or since by a batch that met a failing store).
    private var estimate: (perSecond: Double, at: ContinuousClock.Instant)?
    /// A batch met a failing or stalled store since ``estimate`` was made: only ``minimumJobs`` replace it.
    private var recovering = false
    private let window: Duration = .seconds(5)
    /// A capacity measured longer ago than this is forgotten (the machine or its load may have changed).
    static let maximumAge: Duration = .seconds(60)
    /// Jobs, or seconds of batch processing, the window must hold before an estimate is made.
    static let minimumJobs = 256
    static let minimumSeconds = 2.0
    /// A batch slower than this many times its predicted processing time, plus ``stallMargin``, waited
    /// on the store (a stall), not on work.
    static let stallFactor = 4.0
    static let stallMargin: Duration = .milliseconds(500)
    let initial: Double?
    let concurrency: Int

    init(initial: Double? = nil, concurrency: Int = 1) {
        self.initial = initial.map { max($0, 1) }
        self.concurrency = max(concurrency, 1)
    }

    /// Records a batch the store served: `jobs` jobs in `processing`. A stall (far slower than the
    /// estimate predicts) is no sample and returns false.
    @discardableResult
    mutating func record(jobs: Int, processing: Duration, at now: ContinuousClock.Instant = .now) -> Bool {
        guard jobs > 0 else { return true }
        if let held = estimate, now - held.at <= Self.maximumAge {
            // Each of `concurrency` batches at once gets its share of the capacity.
            let predicted = Double(jobs) * Double(concurrency) / held.perSecond
            if processing.seconds > predicted * Self.stallFactor + Self.stallMargin.seconds {
                // Whatever follows the stall is measured as after an outage.
                clearWindow()
                recovering = true
                return false
            }
        }
        let sample = (at: now, jobs: jobs, seconds: max(processing.seconds, 0.000_001))
        samples.append(sample)
        windowJobs += sample.jobs
        windowSeconds += sample.seconds
        let horizon = now - window
        while let oldest = samples.first, oldest.at < horizon {
            samples.removeFirst()
            windowJobs -= oldest.jobs
            windowSeconds -= oldest.seconds
        }
        // The running sum of seconds drifts by rounding; an emptied window starts again from zero.
        if samples.count == 1 { windowSeconds = sample.seconds }
        let jobs = windowJobs
        let seconds = windowSeconds
        let fresh = estimate.map { now - $0.at <= Self.maximumAge } ?? false
        // After an outage the held estimate gives way only to a window with many jobs in it; an
        // estimate that has aged out gives way to any window with enough work, as at start-up.
        let enough = jobs >= Self.minimumJobs || (seconds >= Self.minimumSeconds && !(recovering && fresh))
        guard enough else { return true }
        estimate = (max(Double(jobs) / seconds * Double(concurrency), 1), now)
        recovering = false
        return true
    }

    /// Records a batch that met a failing store (a `storeUnavailable` answer, retried or not): not a
    /// sample of capacity. The estimate held now stays, its age counted from here, and the batches
    /// after the store is back start a window of their own.
    mutating func recordStoreFailure(at now: ContinuousClock.Instant = .now) {
        clearWindow()
        guard let held = estimate, now - held.at <= Self.maximumAge else { return }
        estimate = (held.perSecond, now)
        recovering = true
    }

    private mutating func clearWindow() {
        samples.removeAll()
        windowJobs = 0
        windowSeconds = 0
    }

    /// Jobs per second: the last estimate made from enough work, while it is at most
    /// ``maximumAge`` old; else the initial guess (nil by default).
    func perSecond(at now: ContinuousClock.Instant = .now) -> Double? {
        guard let estimate, now - estimate.at <= Self.maximumAge else { return initial }
        return estimate.perSecond
    }
}
