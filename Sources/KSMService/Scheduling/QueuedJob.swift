/// A job in its tenant's heap (swift-collections' `Heap`), ordered by its ``ScheduledJob/QueueOrder``
/// alone: earliest deadline first, no deadline last, and arrival order among equal deadlines, which
/// `Heap` does not keep by itself (its order among equal elements is arbitrary), so the sequence is
/// part of the key. The key sits beside the job so a comparison reads two plain values and never
/// the job's box.
struct QueuedJob: Comparable, Sendable {
    let order: ScheduledJob.QueueOrder
    let job: ScheduledJob

    init(_ job: ScheduledJob) {
        order = job.queueOrder
        self.job = job
    }

    static func < (a: QueuedJob, b: QueuedJob) -> Bool { a.order < b.order }

    /// Equal only to itself: sequences are unique per scheduler.
    static func == (a: QueuedJob, b: QueuedJob) -> Bool { a.order == b.order }
}
