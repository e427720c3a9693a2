/// The answer stage: a batch of scheduled jobs in, one outcome per job out, in order. Refusals that
/// need no work come first (an oversized value, a reply topic outside the allowlist, a shed job);
/// the rest go through the ``LicenseProcessor``, and a store outage is retried as ``storeRetry``
/// says before it is answered (fail closed).
struct JobAnswerer: Sendable {
    let processor: LicenseProcessor
    let routing: ReplyRouting
    let statistics: WorkerStatistics
    var storeRetry = StoreRetryPolicy()

    /// A batch's answers, one per job in order, and whether the store failed it on the first attempt.
    struct Answered: Sendable {
        var outcomes: [JobOutcome]
        /// Some job was answered `storeUnavailable` at first (retried or not): the batch's time went to
        /// the store's outage, not to work, so it is no measure of capacity (``ServiceRate``).
        var storeFailed = false
    }

    /// ``answer(_:)``'s outcomes alone.
    func outcomes(for batch: [ScheduledJob]) async -> [JobOutcome] {
        await answer(batch).outcomes
    }

    /// A batch of at most ``CryptoPool/inPlaceLimit`` jobs runs on one crypto thread from its first
    /// stage to its last (``CryptoThreadExecutor``): a job arriving alone otherwise crosses a dozen
    /// threads (a Redis connection's queue and back for each of four round trips, a crypto thread and
    /// back twice), each crossing a wake-up that costs more than the work between them.
    func answer(_ batch: [ScheduledJob]) async -> Answered {
        if batch.count <= CryptoPool.inPlaceLimit {
            return await withTaskExecutorPreference(processor.pool.executor) { await answerHere(batch) }
        }
        return await answerHere(batch)
    }

    private func answerHere(_ batch: [ScheduledJob]) async -> Answered {
        var replies = [LicenseReply?](repeating: nil, count: batch.count)
        var work: [Int] = []
        var refused: [Int: String] = [:]
        var topicRefusals = 0
        for (index, job) in batch.enumerated() {
            if job.isOversize, case .failure(let error) = job.decoded {
                // Refused before any work: never decoded, never asked of the store.
                refused[index] = error.reason
            } else if case .success(let decoded) = job.decoded, let refusal = routing.refusal(for: decoded, message: job.message) {
                // Refused before any work: no RSA, no lease slot, no store read for a job whose answer
                // would go where the platform does not allow (``ReplyTopicPolicy``).
                replies[index] = refusal
                topicRefusals += 1
            } else if let retryAfter = job.retryAfterMilliseconds, case .success(let decoded) = job.decoded {
                replies[index] = LicenseReply(
                    id: decoded.id.value, status: .overloaded,
                    reason: "worker overloaded: this \(decoded.priority) job would wait longer than allowed; retry after \(retryAfter) ms",
                    tenant: decoded.tenant.value, account: decoded.account.value, rule: "schedule:shed-\(decoded.priority)",
                    retryAfterMilliseconds: retryAfter)
            } else {
                work.append(index)
            }
        }
        if topicRefusals > 0 { statistics.update { $0.replyTopicRefusals += topicRefusals } }
        // One ledger for the batch's attempts: a retry after a store outage does not count a job
        // against its account's rate limit twice.
        let ledger = RateCountLedger()
        let processed = await processor.process(decoded: work.map { batch[$0].decoded }, ledger: ledger, firstDeliveries: work.map { batch[$0].firstDelivery })
        for (index, reply) in zip(work, processed) { replies[index] = reply }
        var storeFailed = false
        var attempts = 1
        while case .retry(let retry, let delay) = storeRetry.next(afterAttempts: attempts, statuses: replies.map { $0?.status }) {
            storeFailed = true
            attempts += 1
            statistics.update { $0.storeRetries += 1 }
            try? await Task.sleep(for: delay)
            let again = await processor.process(
                decoded: retry.map { batch[$0].decoded }, ledger: ledger, firstDeliveries: retry.map { batch[$0].firstDelivery })
            for (index, reply) in zip(retry, again) { replies[index] = reply }
        }
        var generator = SystemRandomNumberGenerator()
        let outcomes: [JobOutcome] = replies.enumerated().map { index, entry in
            if let reason = refused[index] { return .deadLetter(reason: reason) }
            // Every other entry was filled above: refusals and shed jobs, then the processor's one reply per job.
            guard var reply = entry else { return .deadLetter(reason: "internal: job left unanswered") }
            if reply.status == .storeUnavailable, reply.retryAfterMilliseconds == nil {
                reply.retryAfterMilliseconds = StoreRetryPolicy.retryAfterMilliseconds(using: &generator)
            }
            // A payload without even a readable ID cannot be answered: it goes to the dead-letter topic.
            return reply.status == .invalidJob && reply.id.isEmpty ? .deadLetter(reason: reply.reason) : .reply(reply)
        }
        return Answered(outcomes: outcomes, storeFailed: storeFailed)
    }
}
