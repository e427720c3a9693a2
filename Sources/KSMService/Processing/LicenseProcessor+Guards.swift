import FairPlay
import Licensing
import Logging

/// The guards' steps of the pipeline: one round trip each, for the whole batch.
///
/// - `admit` (before the deadline check and any RSA work): a job with a stored reply is answered
///   with those bytes (a redelivery after a crash or a refused commit); a new job counts toward its
///   account's rate window and is refused `rateLimited` past its tenant's `rate-limit`.
/// - `claimSPCs` (after the SPCs opened, only when some tenant of the batch sets a replay window):
///   an SPC seen under another job ID within the window is refused `replayedSPC`.
/// - `storeReplies` (after the CKCs, before anything is published): every final reply is stored;
///   a reply another worker stored first for the same job wins and is returned instead.
extension LicenseProcessor {
    /// Returns the jobs (batch indices) that go on, and each tenant's guard settings as read.
    /// - Parameter firstDelivery: per job, true when no reply can be stored for it yet; nil: none is known to be.
    func admit(
        _ indices: [Int], firstDelivery: [Bool]?, guards: JobGuards, now: Int64, ledger: RateCountLedger? = nil,
        answering replies: inout BatchReplies
    ) async -> (admitted: [Int], settings: [StoreIdentifier: GuardSettings]) {
        if indices.isEmpty { return ([], [:]) }
        let requests = indices.map { index in
            let job = replies.jobs[index]
            // Counted by an earlier attempt of this batch: looked up, not counted again.
            let counted = ledger?.contains(job.id) ?? false
            return AdmissionRequest(
                tenant: job.tenant, account: job.account, jobID: job.id,
                countsTowardRate: !counted && guards.settingsCache.mayRateLimit(job.tenant),
                mayHaveStoredReply: !(firstDelivery?[index] ?? false))
        }
        var admitted: AdmissionBatch
        do {
            admitted = try await guards.store.admit(requests, nowMilliseconds: now, rateWindowMilliseconds: guards.rateWindowMilliseconds)
            if let error = LicenseStoreError.answerCount(admitted.admissions.count, of: requests.count, "admissions", from: "guard store") { throw error }
            // A tenant believed to have no rate limit has one now (an operator just set it): count
            // those jobs after all, in a second round trip, so a new limit applies from this batch.
            let uncounted = requests.indices.filter { position in
                // Only an uncounted admission (0): a store that counted anyway is not counted twice;
                // nor a job an earlier attempt counted.
                guard !requests[position].countsTowardRate, !(ledger?.contains(requests[position].jobID) ?? false),
                    admitted.settings[requests[position].tenant]?.rateLimit != nil,
                    case .counted(0) = admitted.admissions[position]
                else { return false }
                return true
            }
            if !uncounted.isEmpty {
                var recount = uncounted.map { requests[$0] }
                for i in recount.indices { recount[i].countsTowardRate = true }
                let counted = try await guards.store.admit(recount, nowMilliseconds: now, rateWindowMilliseconds: guards.rateWindowMilliseconds)
                if let error = LicenseStoreError.answerCount(counted.admissions.count, of: recount.count, "admissions", from: "guard store") { throw error }
                for (position, admission) in zip(uncounted, counted.admissions) { admitted.admissions[position] = admission }
            }
        } catch {
            replies.failAll(indices.lazy.map { ($0, nil) }, storeError: error, during: "admit")
            return ([], [:])
        }
        guards.settingsCache.remember(admitted.settings)
        ledger?.record(
            zip(requests, admitted.admissions).compactMap { request, admission in
                if case .counted(let n) = admission, n > 0 { request.jobID } else { nil }
            })
        let window = max(1, guards.rateWindowMilliseconds)
        var admittedJobs: [Int] = []
        admittedJobs.reserveCapacity(indices.count)
        for (index, admission) in zip(indices, admitted.admissions) {
            let job = replies.jobs[index]
            switch admission {
            case .stored(let stored):
                guard stored.answers(requestDigest: job.requestDigest) else {
                    replies.answer(index, .jobIdReused, JobIDReuse.reason(job.id, ttlMilliseconds: guards.replyTTLMilliseconds), rule: JobIDReuse.rule)
                    continue
                }
                if let reply = LicenseReply(duplicate: stored.bytes) {
                    replies.answer(index, duplicate: reply)
                    continue
                }
                logger.warning("stored reply does not decode; answering the job afresh", metadata: [LoggingKeys.requestID: "\(job.id)"])
            case .counted(let count):
                if let limit = admitted.settings[job.tenant]?.rateLimit, count > limit {
                    let retryAfter = window - now % window
                    replies.answer(
                        index, .rateLimited, "account \(job.account) sent \(count) jobs in this \(window) ms window; tenant \(job.tenant) allows \(limit)",
                        rule: "rate:limited", retryAfterMilliseconds: retryAfter)
                    continue
                }
            }
            admittedJobs.append(index)
        }
        return (admittedJobs, admitted.settings)
    }

    /// Returns the jobs whose SPC is fresh (or whose tenant sets no replay window).
    func claimSPCs(
        _ opened: [OpenedJob], settings: [StoreIdentifier: GuardSettings], guards: JobGuards,
        answering replies: inout BatchReplies
    ) async -> [OpenedJob] {
        var positions: [Int] = []
        var claims: [SPCClaim] = []
        for (position, job) in opened.enumerated() {
            let licenseJob = replies.jobs[job.index]
            guard let window = settings[licenseJob.tenant]?.replayWindowMilliseconds, window > 0 else { continue }
            positions.append(position)
            claims.append(
                SPCClaim(
                    tenant: licenseJob.tenant, jobID: licenseJob.id, transactionID: job.request.payload.transactionID,
                    digest: FairPlayCrypto.sha256(licenseJob.spc), windowMilliseconds: window))
        }
        if claims.isEmpty { return opened }
        let fresh: [Bool]
        do {
            fresh = try await guards.store.claim(claims)
            if let error = LicenseStoreError.answerCount(fresh.count, of: claims.count, "claims", from: "guard store") { throw error }
        } catch {
            replies.failAll(opened.lazy.map { ($0.index, $0.request) }, storeError: error, during: "claim")
            return []
        }
        var replayed = [Bool](repeating: false, count: opened.count)
        for (offset, position) in positions.enumerated() where !fresh[offset] {
            replayed[position] = true
            let claim = claims[offset]
            replies.answer(
                opened[position].index, request: opened[position].request, .replayedSPC,
                "this SPC (transaction \(claim.transactionID.map { String($0, radix: 16) } ?? "none")) was already sent by another job within the last \(claim.windowMilliseconds) ms",
                rule: "replay:spc")
        }
        return zip(opened, replayed).filter { !$0.1 }.map(\.0)
    }

    func storeReplies(_ replies: [LicenseReply], jobs: [LicenseJob], guards: JobGuards) async -> [LicenseReply] {
        var positions: [Int] = []
        var stored: [StoredReply] = []
        for (index, reply) in replies.enumerated() where !reply.isDuplicate && !reply.isRetriable && reply.status != .jobIdReused {
            // Retriable answers are not final: the same job sent again must get a real answer. A
            // reused job ID keeps the answer stored for its first request.
            let job = jobs[index]
            positions.append(index)
            stored.append(
                StoredReply(
                    tenant: job.tenant, account: job.account, jobID: job.id,
                    answer: StoredAnswer(bytes: reply.jsonBytes(), requestDigest: job.requestDigest), ttlMilliseconds: guards.replyTTLMilliseconds))
        }
        if stored.isEmpty { return replies }
        var result = replies
        do {
            let earlier = try await guards.store.storeReplies(stored)
            if let error = LicenseStoreError.answerCount(earlier.count, of: stored.count, "stored replies", from: "guard store") { throw error }
            for (offset, (position, answer)) in zip(positions, earlier).enumerated() {
                guard let answer else {
                    // Ours were kept: publish exactly those bytes, without writing the reply again.
                    result[position].storedJSON = stored[offset].answer.bytes
                    continue
                }
                if let digest = stored[offset].answer.requestDigest, !answer.answers(requestDigest: digest) {
                    // Another request took this job ID first (its message was past the log end, so
                    // `admit` did not look): this one gets no CKC, nor the other's.
                    let old = result[position]
                    result[position] = LicenseReply(
                        id: old.id, status: .jobIdReused, reason: JobIDReuse.reason(jobs[position].id, ttlMilliseconds: guards.replyTTLMilliseconds),
                        tenant: old.tenant, account: old.account, rule: JobIDReuse.rule)
                } else if let first = LicenseReply(duplicate: answer.bytes) {
                    result[position] = first
                }
            }
        } catch {
            // Fail closed: an answer that cannot be kept is not published, or a redelivery could
            // get a different one. The job is answered retriable and comes back.
            let retriable = (error as? LicenseStoreError)?.isRetriable ?? false
            let message = StoreFailureReason.logMessage(error)
            logger.warning(
                "store storeReplies failed; answering \(positions.count) jobs",
                metadata: [LoggingKeys.reason: "\(message)", LoggingKeys.retriable: "\(retriable)"])
            for position in positions {
                let old = result[position]
                result[position] =
                    retriable
                    ? LicenseReply(
                        id: old.id, status: .storeUnavailable, reason: StoreFailureReason.reason(during: "storeReplies", retriable: true),
                        tenant: old.tenant, account: old.account, rule: "store:unavailable")
                    : LicenseReply(
                        id: old.id, status: KSMStatus(.internalError), reason: StoreFailureReason.reason(during: "storeReplies", retriable: false),
                        tenant: old.tenant, account: old.account, rule: "store:error")
            }
        }
        return result
    }
}
