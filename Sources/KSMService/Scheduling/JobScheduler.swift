import DequeModule
import HeapModule
import Kafka
import Wire

/// Orders a worker's queued jobs for the next batch, and sheds what cannot be served in time.
///
/// Continuity (viewers already playing: renewals, next keys) before new sessions before prefetch;
/// inside a class, tenants share the worker by weight (start-time fair queuing: each tenant has a
/// virtual time that advances by 1/weight per job served, the smallest goes next), and a tenant's
/// own jobs go earliest deadline first. Strict order has one exception, the floor: new sessions and
/// prefetch get at least their share of every batch while they have jobs queued
/// (``SchedulingPolicy/newSessionShare``), so a continuity storm that outlasts the worker delays them
/// but never starves them. Jobs whose deadline already passed are taken at once (the
/// processor answers them `deadlineExpired` without RSA work), so they never hold a batch slot.
/// Under overload, a prefetch or new-session job that would wait longer than the policy allows is
/// shed on arrival with a retry-after hint (a jittered point before its predicted wait ends, so
/// clients spread out and none is told to come back after the backlog cleared:
/// ``retryAfterMilliseconds(wait:limit:clearance:)``).
/// With the policy disabled it is a plain FIFO that sheds nothing: the comparison baseline.
struct JobScheduler: Sendable {
    /// The classes in service order.
    static let classes: [LicenseJob.Priority] = [.continuity, .new, .prefetch]

    private struct TenantQueue: Sendable {
        var heap = Heap<QueuedJob>()
        var virtualTime: Double = 0

        mutating func admit(_ job: ScheduledJob, virtualClock: Double) {
            if heap.isEmpty {
                // A tenant that was idle starts at the class's current virtual time: no banked credit.
                virtualTime = max(virtualTime, virtualClock)
            }
            heap.insert(QueuedJob(job))
        }
    }

    private struct ClassQueue: Sendable {
        var tenants: [ByteKey: TenantQueue] = [:]
        var virtualClock: Double = 0
        var count = 0
        /// Batch slots this class is owed by its floor share (``SchedulingPolicy/newSessionShare``);
        /// accrues only while the class has jobs queued, so an idle class banks nothing.
        var credit: Double = 0
    }

    let policy: SchedulingPolicy
    private var queues = Array(repeating: ClassQueue(), count: JobScheduler.classes.count)
    private var fifo = Deque<ScheduledJob>()
    private var shed: [ScheduledJob] = []
    private var nextSequence: UInt64 = 0

    /// Larger request values are refused undecoded (``ScheduledJob/isOversize``).
    let maximumRequestBytes: Int

    init(policy: SchedulingPolicy, maximumRequestBytes: Int = LicenseJob.maximumEncodedSize) {
        self.policy = policy
        self.maximumRequestBytes = maximumRequestBytes
    }

    /// Jobs waiting (shed ones included until handed out).
    var count: Int {
        policy.enabled ? queues.reduce(shed.count) { $0 + $1.count } : fifo.count
    }

    /// Queued jobs per class, for metrics.
    var countByClass: [LicenseJob.Priority: Int] {
        var counts: [LicenseJob.Priority: Int] = [:]
        for (index, priority) in Self.classes.enumerated() { counts[priority] = policy.enabled ? queues[index].count : 0 }
        if !policy.enabled { counts[.new] = count }
        return counts
    }

    private static func classIndex(_ priority: LicenseJob.Priority) -> Int {
        classes.firstIndex(of: priority) ?? 1
    }

    /// Queues a consumed message. `ahead` is work already taken but unanswered (batches in flight),
    /// `rate` the recent service rate in jobs per second (the worker's capacity with the store
    /// serving, ``ServiceRate``: a store outage does not lower it); together they predict this job's wait.
    /// With no rate (none measured yet) nothing is shed. Returns the job as queued (with
    /// `retryAfterMilliseconds` set when it was shed). `firstDelivery`: see ``ScheduledJob/firstDelivery``.
    @discardableResult
    mutating func push(
        _ message: KafkaMessage, inFlight ahead: Int, rate: Double?, firstDelivery: Bool = false,
        topicClass: LicenseJob.Priority? = nil,
        now: Int64 = LicenseProcessor.currentTimeMilliseconds()
    ) -> ScheduledJob {
        var job = ScheduledJob(
            message: message, sequence: nextSequence, firstDelivery: firstDelivery, maximumBytes: maximumRequestBytes,
            topicClass: topicClass)
        nextSequence &+= 1
        guard policy.enabled else {
            fifo.append(job)
            return job
        }
        let index = Self.classIndex(job.priority)
        let limit: Duration? =
            switch job.priority {
            case .prefetch: policy.prefetchMaximumWait
            case .continuity: nil
            default: policy.newSessionMaximumWait
            }
        if var limit = limit?.seconds, let rate {
            // A job that would only be answered after its own deadline is told now, not then (one
            // already past it is queued: it is answered `deadlineExpired` at once, without work).
            if let deadline = job.deadline, deadline > now { limit = min(limit, Double(deadline - now) / 1000) }
            let before = queues[...index].reduce(ahead) { $0 + $1.count }
            let wait = Double(before) / max(rate, 1)
            if wait > limit {
                let clearance = Double(queues.reduce(ahead) { $0 + $1.count }) / max(rate, 1)
                job.retryAfterMilliseconds = Self.retryAfterMilliseconds(wait: wait, limit: limit, clearance: clearance)
                shed.append(job)
                return job
            }
        }
        // Mutated in place through the array and dictionary accessors: a copy of a tenant's heap
        // would make every push O(n) during a storm.
        let clock = queues[index].virtualClock
        queues[index].tenants[job.tenant, default: TenantQueue()].admit(job, virtualClock: clock)
        queues[index].count += 1
        return job
    }

    /// The retry-after for a job shed with a predicted `wait` (seconds: the work ahead of it over the
    /// service rate) above its `limit`, when the worker's whole backlog clears in `clearance`
    /// seconds (never less than `wait`).
    ///
    /// A uniformly random point in [max(wait - limit, wait / 2), wait], so the clients shed together
    /// come back spread out, and each while the work ahead of it is down to its limit: it is then
    /// queued, not shed again, and answered about when the backlog it was behind clears, never after.
    /// Never more than `clearance`, nor 60 s; at least 200 ms unless the backlog clears sooner.
    static func retryAfterMilliseconds(wait: Double, limit: Double, clearance: Double) -> Int64 {
        let earliest = max(wait - limit, wait / 2)
        let hint = earliest < wait ? Double.random(in: earliest...wait) : wait
        let bounded = min(max(hint, min(0.2, clearance)), clearance, 60)
        return Int64((bounded * 1000).rounded(.down))
    }

    /// The next batch: every shed job and every job whose deadline passed (cheap to answer), then
    /// up to `limit` jobs in class, fairness and deadline order, less the slots the lower classes'
    /// floor shares have earned (their credit), which go to them first.
    mutating func nextBatch(limit: Int, now: Int64) -> [ScheduledJob] {
        guard policy.enabled else {
            return fifo.popFirst(limit)
        }
        var batch = shed
        shed.removeAll()
        takeExpired(now: now, into: &batch)
        let floors = reserveFloors(limit: limit)
        var taken = 0
        var owed = floors.reduce(0, +)
        for index in queues.indices {
            // Slots owed to lower classes stay free; a class's own floor counts toward what it may take.
            owed -= floors[index]
            while taken < limit - owed, let job = popFair(index) {
                batch.append(job)
                taken += 1
                queues[index].credit = max(0, queues[index].credit - 1)
            }
        }
        return batch
    }

    /// Slots of this batch owed to each class by its floor share: the share of `limit` accrues as
    /// credit while the class has jobs queued (dropped when it has none), and whole credits become
    /// reserved slots, at most what the class has queued and what the batch has left after the
    /// classes above it (a one-job batch cannot owe a slot to both new sessions and prefetch).
    /// Continuity has no floor: it is first.
    private mutating func reserveFloors(limit: Int) -> [Int] {
        var floors = Array(repeating: 0, count: queues.count)
        var reserved = 0
        for (index, priority) in Self.classes.enumerated() {
            let share =
                switch priority {
                case .new: policy.newSessionShare
                case .prefetch: policy.prefetchShare
                default: 0.0
                }
            guard share > 0, queues[index].count > 0 else {
                queues[index].credit = 0
                continue
            }
            // Capped at one batch's worth, so a class cannot bank a burst of slots either.
            queues[index].credit = min(queues[index].credit + share * Double(limit), max(1, share * Double(limit)) + 1)
            floors[index] = min(Int(queues[index].credit), queues[index].count, max(0, limit - reserved))
            reserved += floors[index]
        }
        return floors
    }

    /// Jobs past their deadline sit at the top of their tenant's heap (earliest deadline first).
    private mutating func takeExpired(now: Int64, into batch: inout [ScheduledJob]) {
        for index in queues.indices where queues[index].count > 0 {
            for name in Array(queues[index].tenants.keys) {
                var popped = 0
                while let deadline = queues[index].tenants[name]?.heap.min?.job.deadline, deadline <= now,
                    let job = queues[index].tenants[name]?.heap.popMin()?.job
                {
                    batch.append(job)
                    popped += 1
                }
                guard popped > 0 else { continue }
                queues[index].count -= popped
                if queues[index].tenants[name]?.heap.isEmpty == true { queues[index].tenants[name] = nil }
            }
        }
    }

    /// The next job of class `index`: the backlogged tenant with the smallest virtual time.
    private mutating func popFair(_ index: Int) -> ScheduledJob? {
        guard queues[index].count > 0 else { return nil }
        var chosen: ByteKey?
        var smallest = Double.infinity
        for (name, tenant) in queues[index].tenants where !tenant.heap.isEmpty {
            if tenant.virtualTime < smallest || (tenant.virtualTime == smallest && name < (chosen ?? name)) {
                smallest = tenant.virtualTime
                chosen = name
            }
        }
        // In place (see `push`): no copy of the heap.
        guard let name = chosen, let job = queues[index].tenants[name]?.heap.popMin()?.job else { return nil }
        queues[index].virtualClock = smallest
        queues[index].tenants[name]?.virtualTime += 1 / policy.weight(name)
        queues[index].count -= 1
        // An emptied tenant is dropped to bound memory; it restarts at the class's virtual clock.
        if queues[index].tenants[name]?.heap.isEmpty == true { queues[index].tenants[name] = nil }
        return job
    }

    /// Drops queued jobs of revoked partitions: their new owner receives them again.
    mutating func revoke(_ partitions: Set<TopicPartition>) {
        fifo.removeAll { partitions.contains($0.message.topicPartition) }
        shed.removeAll { partitions.contains($0.message.topicPartition) }
        for index in queues.indices {
            var total = 0
            for name in Array(queues[index].tenants.keys) {
                guard var tenant = queues[index].tenants[name] else { continue }
                tenant.heap = Heap(tenant.heap.unordered.filter { !partitions.contains($0.job.message.topicPartition) })
                total += tenant.heap.count
                queues[index].tenants[name] = tenant.heap.isEmpty ? nil : tenant
            }
            queues[index].count = total
        }
    }
}
