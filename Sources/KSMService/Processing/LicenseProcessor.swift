import FairPlay
import Foundation
import Licensing
import Logging

/// Turns a batch of license jobs into replies: the worker's core, independent of Kafka.
///
/// A batch runs through typed stages (docs/worker.md). Each stage takes the jobs still in flight as
/// values and returns the ones that go on; a job a stage stops leaves with its reply in
/// ``BatchReplies``. A stage's store call covers the whole batch in one round trip. An entry that did
/// not decode never enters: ``process(decoded:now:ledger:firstDeliveries:)`` answers it `invalidJob`.
///
/// 0. admit (guards only; job indices -> indices): a redelivered job gets its stored reply, a job past
///    its account's rate limit `rateLimited`, before any RSA work (LicenseProcessor+Guards.swift);
/// 1. deadline (indices -> indices): a job whose deadline has passed is answered, with no RSA work;
/// 2. open (indices -> ``OpenedJob``): every SPC opened with ``KeyServerModule`` on the ``CryptoPool``
///    (RSA, off the cooperative pool);
/// 3. claim (guards only, for tenants that set a replay window; ``OpenedJob`` -> ``OpenedJob``): an
///    SPC another job sent within the window is refused;
/// 4. judge (``OpenedJob`` -> ``IssuedJob``): ONE `store.fetch` for the batch (tenant, wrapped content
///    key for the SPC's asset ID, the policy layers, the account's rental start or offline records);
///    per job, preflight (tenant known, owns the SPC's certificate, a key or key seed and some policy
///    stored), the entitlement token verified and the layers judged by ``PolicyEngine`` (a
///    ``JudgedJob``, each document parsed once per batch); then a refusal is answered and an issued
///    job gets its key, unwrapped or derived only if the terms send it;
/// 5. lease (``IssuedJob`` -> ``LeasedJob``): ONE `store.acquireLeases` for the jobs whose decision
///    has a side effect: lease slot, device registration, rental start, offline records (request ID =
///    job ID, so a redelivered job gets the same answer and records nothing twice);
/// 6. CKC (``LeasedJob`` -> reply): every CKC built on the pool from the decision's terms (content key
///    duration or offline key, HDCP, required security level; no content key for playback state 2 or
///    a sync check-in);
/// 7. store replies (guards only; replies -> replies): every final reply kept before it is published.
///
/// Every job gets exactly one reply, in input order. A retriable store failure answers every job
/// still in flight at that stage with ``KSMStatus/storeUnavailable`` (fail closed: no license without
/// policy); jobs already answered (deadline, SPC errors) keep their final answer.
public struct LicenseProcessor: Sendable {
    /// Opens SPCs and builds CKCs (stages 2 and 6), on ``pool``.
    public let keyServer: KeyServerModule
    /// Tenants, wrapped keys, policies and leases: one round trip per stage that reads or writes.
    public let store: any LicenseStore
    /// Unwraps the content keys and token secrets the store holds wrapped.
    public let keyring: KeyEncryptionKeyring
    /// The threads RSA and CKC building run on, off the cooperative pool.
    public let pool: CryptoPool
    /// The base logger; each job logs with a copy carrying its request ID.
    public let logger: Logger
    /// Stored replies, rate limits and anti-replay (LicenseProcessor+Guards.swift); nil: none.
    public let guards: JobGuards?
    /// Advertises the next rotation boundary in successful replies (``NextKeyAdvice``); nil: never.
    package var prefetchAdvisor: PrefetchAdvisor?

    /// Creates a processor from its parts; it starts nothing.
    /// - Parameters:
    ///   - keyServer: The credentials' key server.
    ///   - store: The license store, usually a `RedisLicenseStore`.
    ///   - keyring: The key-encryption keys the store's keys are wrapped under.
    ///   - pool: The crypto threads.
    ///   - logger: The logger jobs log to.
    ///   - guards: Stored replies, rate limits and anti-replay; nil (the default) runs none.
    public init(keyServer: KeyServerModule, store: any LicenseStore, keyring: KeyEncryptionKeyring, pool: CryptoPool, logger: Logger, guards: JobGuards? = nil)
    {
        self.keyServer = keyServer
        self.store = store
        self.keyring = keyring
        self.pool = pool
        self.logger = logger
        self.guards = guards
    }

    /// The wall clock in milliseconds since 1970, the unit of deadlines and leases.
    public static func currentTimeMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// Decodes each payload as a ``LicenseJob`` and processes the batch; a payload that does not
    /// decode gets an ``KSMStatus/invalidJob`` reply naming the field. One reply per payload, in order.
    package func process(encoded payloads: [[UInt8]], now: Int64 = LicenseProcessor.currentTimeMilliseconds()) async -> [LicenseReply] {
        await process(
            decoded: payloads.map { payload in
                Result { () throws(LicenseJobError) in try LicenseJob(json: payload) }
            }, now: now)
    }

    /// Processes jobs decoded earlier (the worker decodes on arrival, to schedule them); a decoding
    /// failure gets its ``KSMStatus/invalidJob`` reply in place. One reply per entry, in order.
    /// - Parameter ledger: the jobs an earlier attempt of the same batch already counted toward the
    ///   rate limit (the worker's retries after a store outage); nil: none.
    /// - Parameter firstDeliveries: per entry, true when no reply can be stored for it yet (see
    ///   ``AdmissionRequest/mayHaveStoredReply``); nil: none is known to be.
    package func process(
        decoded entries: [Result<LicenseJob, LicenseJobError>], now: Int64 = LicenseProcessor.currentTimeMilliseconds(),
        ledger: RateCountLedger? = nil, firstDeliveries: [Bool]? = nil
    ) async -> [LicenseReply] {
        var replies = [LicenseReply?](repeating: nil, count: entries.count)
        var jobs: [LicenseJob] = []
        var positions: [Int] = []
        var first: [Bool] = []
        for (index, entry) in entries.enumerated() {
            switch entry {
            case .success(let job):
                jobs.append(job)
                positions.append(index)
                first.append(firstDeliveries.map { index < $0.count && $0[index] } ?? false)
            case .failure(let error):
                let reply = LicenseReply(invalidJob: error)
                var log = logger
                if !reply.id.isEmpty { log[metadataKey: LoggingKeys.requestID] = "\(reply.id)" }
                log.debug(
                    "job refused",
                    metadata: [LoggingKeys.status: "\(reply.status.name)", LoggingKeys.rule: "\(reply.rule)", LoggingKeys.reason: "\(reply.reason)"])
                replies[index] = reply
            }
        }
        let processed = await process(jobs, now: now, ledger: ledger, firstDeliveries: first)
        var result: [LicenseReply] = []
        result.reserveCapacity(entries.count)
        for (position, reply) in zip(positions, processed) { replies[position] = reply }
        // Every slot was filled: decoding failures above, the rest from `process`, which answers each job.
        for reply in replies { if let reply { result.append(reply) } }
        return result
    }

    /// Processes a batch of decoded jobs; one reply per job, in input order. Never throws: every
    /// failure is a reply with a status and a reason.
    /// - Parameter now: the clock for deadlines and leases, in milliseconds since 1970.
    package func process(
        _ jobs: [LicenseJob], now: Int64 = LicenseProcessor.currentTimeMilliseconds(), ledger: RateCountLedger? = nil,
        firstDeliveries: [Bool]? = nil
    ) async -> [LicenseReply] {
        if jobs.isEmpty { return [] }
        var replies = BatchReplies(jobs: jobs, logger: logger)
        var admitted = Array(jobs.indices)
        var guardSettings: [StoreIdentifier: GuardSettings] = [:]
        if let guards {
            let firstDelivery = firstDeliveries.flatMap { $0.count == jobs.count ? $0 : nil }
            (admitted, guardSettings) = await admit(admitted, firstDelivery: firstDelivery, guards: guards, now: now, ledger: ledger, answering: &replies)
        }
        let onTime = refuseExpired(admitted, now: now, answering: &replies)
        var opened = await open(onTime, answering: &replies)
        if let guards { opened = await claimSPCs(opened, settings: guardSettings, guards: guards, answering: &replies) }
        let issued = await judge(opened, now: now, answering: &replies)
        let leased = await acquireLeases(issued, now: now, answering: &replies)
        await buildCKCs(leased, now: now, answering: &replies)
        let final = replies.finish()
        guard let guards else { return final }
        return await storeReplies(final, jobs: jobs, guards: guards)
    }

    // MARK: Stages

    /// Stage 1: no RSA for an answer nobody waits for. Returns the jobs still on time.
    private func refuseExpired(_ indices: [Int], now: Int64, answering replies: inout BatchReplies) -> [Int] {
        var onTime: [Int] = []
        onTime.reserveCapacity(indices.count)
        for index in indices {
            if let deadline = replies.jobs[index].deadline, deadline <= now {
                replies.answer(index, .deadlineExpired, "deadline \(deadline) passed \(now - deadline) ms before processing", rule: "deadline")
            } else {
                onTime.append(index)
            }
        }
        return onTime
    }

    /// Stage 2: every SPC opened on the pool. Returns the jobs whose SPC opened.
    private func open(_ indices: [Int], answering replies: inout BatchReplies) async -> [OpenedJob] {
        if indices.isEmpty { return [] }
        let jobs = replies.jobs
        let server = keyServer
        let results = await pool.map(indices.map { jobs[$0].spc }) { spc -> Result<SPCRequest, FairPlayError> in
            do throws(FairPlayError) { return .success(try server.open(spc)) } catch { return .failure(error) }
        }
        var opened: [OpenedJob] = []
        opened.reserveCapacity(indices.count)
        for (index, result) in zip(indices, results) {
            switch result {
            case .success(let request): opened.append(OpenedJob(index: index, request: request))
            case .failure(let error): replies.answer(index, KSMStatus(error.status), error.reason, rule: "fairplay:open")
            }
        }
        return opened
    }

    /// Stage 5: ONE write round trip (`acquireLeases`) for every job whose decision takes a lease
    /// slot, registers a device, starts a rental or records offline licenses. Returns the jobs the
    /// write did not refuse (and those that need none).
    private func acquireLeases(_ issued: [IssuedJob], now: Int64, answering replies: inout BatchReplies) async -> [LeasedJob] {
        var positions: [Int] = []
        var requests: [LeaseRequest] = []
        for (position, job) in issued.enumerated() {
            guard let write = job.evaluation.write else { continue }
            positions.append(position)
            requests.append(write)
        }
        if requests.isEmpty { return issued.map { LeasedJob(issued: $0, lease: nil) } }
        let results: [LeaseResult]
        do {
            results = try await store.acquireLeases(requests)
            if let error = LicenseStoreError.answerCount(results.count, of: requests.count, "lease requests") { throw error }
        } catch {
            replies.failAll(issued.lazy.map { ($0.index, $0.request) }, storeError: error, during: "acquireLeases")
            return []
        }
        var leases = [LeaseResult?](repeating: nil, count: issued.count)
        for (position, result) in zip(positions, results) { leases[position] = result }
        var leased: [LeasedJob] = []
        leased.reserveCapacity(issued.count)
        for (job, lease) in zip(issued, leases) {
            guard case .refused(let reason, let active, let limit) = lease else {
                leased.append(LeasedJob(issued: job, lease: lease))
                continue
            }
            let account = replies.jobs[job.index].account
            switch reason {
            case .deviceLimitReached:
                replies.answer(
                    job.index, request: job.request, .deviceLimitReached, "account \(account) has registered \(active) of \(limit) devices",
                    rule: PolicyRefusal.deviceLimitReached.rule)
            case .streamEnded:
                replies.answer(
                    job.index, request: job.request, .streamEnded, "this stream was ended by a newer one on account \(account)",
                    rule: PolicyRefusal.streamEnded.rule)
            case .noLiveSlot:
                replies.answer(
                    job.index, request: job.request, .leaseRenewalNotAllowed, "the session holds no live lease and the policy does not renew leases",
                    rule: PolicyRefusal.leaseRenewalNotAllowed.rule)
            default:
                replies.answer(
                    job.index, request: job.request, .tooManyStreams, "account \(account) holds \(active) of \(limit) concurrent streams",
                    rule: PolicyRefusal.tooManyStreams.rule)
            }
        }
        return leased
    }

    /// Stage 6: every CKC built on the pool, from the decision's terms; answers every job.
    private func buildCKCs(_ leased: [LeasedJob], now: Int64, answering replies: inout BatchReplies) async {
        if leased.isEmpty { return }
        let items: [CKCJob] = leased.map { job in
            let terms = job.issued.terms
            var duration = terms.duration.contentKeyDuration
            if let expiry = job.lease?.expiresAtMilliseconds {
                // The CKC's lease ends with the slot: a renewal, a hold or a redelivered job gets what remains.
                let remaining = UInt32(clamping: max(1, (expiry - now + 999) / 1000))
                duration =
                    switch terms.duration {
                    case .leaseAndRental(_, let rental): .leaseAndRental(lease: remaining, rental: rental)
                    default: .lease(remaining)
                    }
            }
            let evaluation = job.issued.evaluation
            return CKCJob(
                request: job.issued.request, key: job.issued.key, iv: job.issued.iv, duration: duration,
                offlineKey: terms.duration.offlineKey(streamID: evaluation.streamID, titleID: evaluation.titleID),
                hdcp: terms.hdcp, securityLevel: terms.requiredSecurityLevel, audio: evaluation.policy?.contentType == .audio)
        }
        let server = keyServer
        // One lock per batch: the schedules as of the prefetcher's latest pass.
        let schedules = prefetchAdvisor.map(\.schedules.snapshot) ?? [:]
        let built = await pool.map(items) { item -> Result<[UInt8], FairPlayError> in
            // Empty when the terms send no key (nothing to cleanse then).
            var key = item.key?.copy() ?? []
            defer { FairPlayCrypto.cleanse(&key) }
            do throws(FairPlayError) {
                let content = CKCContent(
                    contentKey: item.key == nil ? nil : key, contentIV: item.iv, keyDuration: item.duration, offlineKey: item.offlineKey, hdcp: item.hdcp,
                    requiredSecurityLevel: item.securityLevel, libraryContentType: item.audio ? 3 : 1)
                return .success(try server.makeCKC(for: item.request, content))
            } catch {
                return .failure(error)
            }
        }
        for (job, result) in zip(leased, built) {
            let index = job.issued.index
            switch result {
            case .success(let ckc):
                let decision = job.issued.evaluation.decision
                var reason = decision.reason
                if case .grantedEndingOldest(_, let ended) = job.lease {
                    reason += "; the account was full: stream \(ended) ended (its renewal will be refused)"
                }
                let expiry = job.lease?.expiresAtMilliseconds
                if let expiry {
                    let renewed = if case .renewed = job.lease { true } else { false }
                    reason += renewed ? "; lease renewed until \(expiry)" : "; lease until \(expiry)"
                }
                let request = job.issued.request
                let spcJob = replies.jobs[index]
                // A check-in ends a stream's offline keys: there is no next key to fetch.
                let advice =
                    schedules.isEmpty || spcJob.checkIn
                    ? nil
                    : prefetchAdvisor?.advice(
                        in: schedules, tenant: spcJob.tenant, account: spcJob.account, assetID: Array(request.assetID),
                        keyPeriod: spcJob.keyPeriod, viewerSession: Self.viewerSession(request), nowMilliseconds: now)
                // A check-in is answered without its CKC, as Apple's SDK 26 answers one.
                replies.answer(
                    index, request: request, .ok, reason, rule: decision.rule, ckc: spcJob.checkIn ? nil : ckc,
                    leaseExpiresAt: expiry, nextKey: advice)
            case .failure(let error):
                replies.answer(index, request: job.issued.request, KSMStatus(error.status), error.reason, rule: "fairplay:ckc")
            }
        }
    }

    /// The playback session that places a viewer in the prefetch window; the device (HU) when the
    /// SPC names no session, so the same viewer lands at the same time on every request.
    static func viewerSession(_ request: SPCRequest) -> [UInt8] {
        if let session = request.payload.playback?.sessionID { return withUnsafeBytes(of: session.bigEndian) { Array($0) } }
        return request.hu
    }
}
