import Tracing

/// Takes batches off the scheduler until it is finished and drained: answers each (``JobAnswerer``),
/// then hands it to a settling task (``ReplyPublisher``, ``JobSettler``) and takes the next at once.
///
/// Why not publish in line: a batch settles only when every delivery report is in, and a reply
/// partition whose leader died holds its reports until the failover (seconds). Nearly every batch
/// has such a reply, so in line every loop stopped within one batch and the fleet went silent,
/// not a third of it (docs/faults.md, broker failover). Handed off, the replies for live partitions
/// keep flowing; the jobs of unsettled batches stay in flight, so the in-flight limit
/// (``WorkerConfiguration/maximumInFlight``) bounds what waits, and fetching pauses at it.
struct BatchLoop: Sendable {
    let state: WorkerState
    let answerer: JobAnswerer
    let publisher: ReplyPublisher
    let settler: JobSettler
    let statistics: WorkerStatistics
    let maximumBatchSize: Int
    /// Open a span per job (``JobTracing``).
    let tracing: Bool

    /// Returns when every batch it took has settled (or, cancelled, stopped publishing).
    func run() async {
        await withDiscardingTaskGroup { settling in
            while let batch = await state.nextBatch(limit: maximumBatchSize) {
                var perClass: [String: Int] = [:]
                for job in batch { perClass[job.priority.rawValue, default: 0] += 1 }
                statistics.update { s in
                    s.batches += 1
                    for (priority, n) in perClass { s.processingByClass[priority, default: 0] += n }
                }
                let spans: [(any Span)?] = tracing ? batch.map { JobTracing.start($0) } : []
                let started = ContinuousClock.now
                let answered = await answerer.answer(batch)
                let processing = ContinuousClock.now - started
                await state.processed(jobs: batch.count, in: processing, storeFailed: answered.storeFailed)
                for (span, outcome) in zip(spans, answered.outcomes) {
                    if let span { JobTracing.recordOutcome(outcome, on: span) }
                }
                let pending = zip(batch, answered.outcomes).enumerated().map { index, pair in
                    PendingReply(
                        message: pair.0.message, outcome: pair.1, priority: pair.0.priority.rawValue, arrived: pair.0.arrived,
                        span: index < spans.count ? spans[index] : nil)
                }
                let settled = JobSettler.Batch(
                    jobs: batch.count, perClass: perClass, batchClass: batch.first?.priority.rawValue ?? LicenseJob.Priority.new.rawValue,
                    processing: processing, spans: spans.compactMap { $0 })
                let (publisher, settler) = (self.publisher, self.settler)
                settling.addTask {
                    let count = await publisher.publish(pending) { await settler.settle($0) }
                    await settler.finish(settled, settled: count)
                }
            }
        }
    }
}
