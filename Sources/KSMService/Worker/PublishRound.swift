import Kafka

/// One round of publishing judged from its delivery reports, as a value: what settled, what is sent
/// again (as it was, or as a smaller fallback), and what the metrics count. ``ReplyPublisher``
/// performs it: the counters in one lock, the log lines, the backoff.
///
/// A retriable failure (Kafka unavailable, queue full, a timeout) is sent again as it was. A
/// non-retriable one never is (a 1 MB dead letter refused with `MSG_SIZE_TOO_LARGE` would jam its
/// partition): a reply or a full dead letter falls back to a headers-only dead letter naming the
/// job; when even that is refused, the message is dropped and settles, so its offset moves on.
struct PublishRound: Sendable {
    /// Delivered: their answers are on a topic.
    var delivered: [PendingReply] = []
    /// Delivered or dropped: their offsets may be stored.
    var settled: [KafkaMessage] = []
    /// For the next round, in order.
    var again: [PendingReply] = []
    /// Sent again as a headers-only dead letter, with the refusal that made it so.
    var fellBack: [(job: PendingReply, error: KafkaError)] = []
    /// Given up on: even the headers-only dead letter was refused.
    var dropped: [(job: PendingReply, error: KafkaError)] = []
    /// The last retriable failure: the next round waits a backoff first. Nil when only fallbacks (or
    /// nothing) are left, which go at once.
    var retriableError: KafkaError?
    /// Every failure's kind, for `ksm_kafka_errors_total`.
    var failedKinds: [KafkaError.Kind] = []
    /// Neither delivered nor retried: the wait for the report was cancelled (shutdown out of time);
    /// the job is redelivered to the partition's next owner.
    var abandoned = 0

    init(judging pending: [PendingReply], results: [Result<KafkaDeliveryReport, KafkaError>]) {
        for (job, result) in zip(pending, results) {
            switch result {
            case .success:
                delivered.append(job)
                settled.append(job.message)
            case .failure(let error) where error.code == .deliveryWaitCancelled:
                abandoned += 1
            case .failure(let error):
                failedKinds.append(error.kind)
                if error.isRetriable {
                    again.append(job)
                    retriableError = error
                } else if let fallback = job.outcome.fallback(after: error) {
                    var next = job
                    next.outcome = fallback
                    again.append(next)
                    fellBack.append((job, error))
                } else {
                    dropped.append((job, error))
                    settled.append(job.message)
                }
            }
        }
    }

    /// Counts the round: replies by status, tenant and class, dead letters, drops, retries, producer
    /// errors and received -> delivered latency (measured to `deliveredAt`).
    func count(into s: inout WorkerStatistics.Snapshot, deliveredAt: ContinuousClock.Instant) {
        let unknownTenant = KSMStatus.unknownTenant.name
        for job in delivered {
            s.endToEndLatency[job.priority, default: LatencyHistogram()].observe(deliveredAt - job.arrived)
            guard case .reply(let reply) = job.outcome else {
                s.deadLettered += 1
                continue
            }
            let status = reply.status.name
            s.replied += 1
            s.repliesByStatus[status, default: 0] += 1
            let tenantLabel = s.tenantLabels.label(for: reply.tenant ?? "", isKnown: status != unknownTenant)
            s.replies[WorkerStatistics.ReplyKey(status: status, tenant: tenantLabel, priority: job.priority), default: 0] += 1
        }
        s.dropped += dropped.count
        s.publishRetries += again.count
        for kind in failedKinds { s.kafkaError("producer", kind) }
    }
}
