import Kafka
import Tracing

/// The settle stage: a job is done once its answer is delivered (or given up on). Delivered
/// messages are marked finished as their publish round ends, and ``WorkerState`` stores each
/// partition's offset once it became contiguous (``OffsetTracker``): never before the answer is
/// on a topic, never backwards (at-least-once; a redelivered job is answered again, idempotent per
/// job ID).
struct JobSettler: Sendable {
    let state: WorkerState
    let statistics: WorkerStatistics

    /// What a batch held while it settles: for the metrics and the spans at its end.
    struct Batch: Sendable {
        var jobs: Int
        /// Jobs per priority class, taken off `processingByClass` at the end.
        var perClass: [String: Int]
        /// The first job's class: the batch-latency histogram it counts in.
        var batchClass: String
        /// How long answering it took.
        var processing: Duration
        var spans: [any Span]
    }

    /// Marks delivered (or dropped) messages finished; their offsets are stored as they become contiguous.
    func settle(_ messages: [KafkaMessage]) async {
        await state.finished(messages, settled: messages.count)
    }

    /// Ends a batch of which `settled` jobs settled: the rest (left when shutdown ran out of time) stop
    /// counting as in flight without storing anything. Then fetching resumes (or pauses) as the room
    /// freed says.
    func finish(_ batch: Batch, settled: Int) async {
        statistics.update { s in
            s.batchLatency[batch.batchClass, default: LatencyHistogram()].observe(batch.processing)
            for (priority, n) in batch.perClass { s.processingByClass[priority, default: 0] -= n }
        }
        for span in batch.spans { span.end() }
        let unsettled = max(0, batch.jobs - settled)
        if unsettled > 0 { await state.finished([], settled: unsettled) }
        await state.fetchChange()
    }
}
