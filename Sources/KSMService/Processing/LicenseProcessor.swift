import FairPlay
import Foundation
import Licensing
import Logging
import Wire

/// Turns a batch of license jobs into replies: the worker's core, independent of Kafka.
///
/// For a batch, in this order (docs/worker.md):
/// 1. deadline check: a job whose deadline has passed is answered at once, with no RSA work;
/// 2. every SPC opened with ``KeyServerModule`` on the ``CryptoPool`` (RSA, off the cooperative pool);
/// 3. ONE `store.fetch` for the batch: tenant, wrapped content key for the SPC's asset ID, the
///    tenant and asset policy layers, and the account's rental start (or offline records for a sync);
/// 4. per job: tenant known, owns the SPC's certificate, key and policy present; the entitlement
///    token verified; the layers stacked (``PolicyLayers``, each document parsed once per batch) and
///    judged by ``PolicyEngine`` (``LicenseEvaluation``); the key unwrapped only if the terms send it;
/// 5. ONE `store.acquireLeases` for the jobs whose decision has a side effect: lease slot, device
///    registration, rental start, offline records (request ID = job ID, so a redelivered job gets
///    the same answer and records nothing twice);
/// 6. every CKC built on the pool from the decision's terms (content key duration or offline key,
///    HDCP, required security level; no content key for playback state 2 or a sync check-in).
///
/// Every job gets exactly one reply, in input order. A retriable store failure answers every job
/// still in flight with ``KSMStatus/storeUnavailable`` (fail closed: no license without policy);
/// jobs already answered (deadline, SPC errors) keep their final answer.
public struct LicenseProcessor: Sendable {
    public let keyServer: KeyServerModule
    public let store: any LicenseStore
    public let keyring: KeyEncryptionKeyring
    public let pool: CryptoPool
    public let logger: Logger
    /// Stored replies, rate limits and anti-replay (LicenseProcessor+Guards.swift); nil: none.
    public let guards: JobGuards?

    public init(keyServer: KeyServerModule, store: any LicenseStore, keyring: KeyEncryptionKeyring, pool: CryptoPool, logger: Logger, guards: JobGuards? = nil) {
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
    public func process(encoded payloads: [[UInt8]], now: Int64 = LicenseProcessor.currentTimeMilliseconds()) async -> [LicenseReply] {
        await process(decoded: payloads.map { payload in
            Result { () throws(LicenseJobError) in try LicenseJob(json: payload) }
        }, now: now)
    }

    /// Processes jobs decoded earlier (the worker decodes on arrival, to schedule them); a decoding
    /// failure gets its ``KSMStatus/invalidJob`` reply in place. One reply per entry, in order.
    /// - Parameter ledger: the jobs an earlier attempt of the same batch already counted toward the
    ///   rate limit (the worker's retries after a store outage); nil: none.
    /// - Parameter firstDeliveries: per entry, true when no reply can be stored for it yet (see
    ///   ``AdmissionRequest/mayHaveStoredReply``); nil: none is known to be.
    public func process(decoded entries: [Result<LicenseJob, LicenseJobError>], now: Int64 = LicenseProcessor.currentTimeMilliseconds(),
                        ledger: RateCountLedger? = nil, firstDeliveries: [Bool]? = nil) async -> [LicenseReply] {
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
                log.debug("job refused", metadata: [LoggingKeys.status: "\(reply.status.name)", LoggingKeys.rule: "\(reply.rule)", LoggingKeys.reason: "\(reply.reason)"])
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
    public func process(_ jobs: [LicenseJob], now: Int64 = LicenseProcessor.currentTimeMilliseconds(), ledger: RateCountLedger? = nil,
                        firstDeliveries: [Bool]? = nil) async -> [LicenseReply] {
        var batch = LicenseBatch(jobs: jobs, logger: logger)
        if let firstDeliveries, firstDeliveries.count == jobs.count { batch.firstDelivery = firstDeliveries }
        if jobs.isEmpty { return [] }

        // 0. Guards, before any RSA work: stored replies (redeliveries) and rate limits.
        if let guards { await admit(&batch, guards: guards, now: now, ledger: ledger) }

        // 1. Deadlines: no RSA for an answer nobody waits for.
        for index in batch.pending {
            if let deadline = jobs[index].deadline, deadline <= now {
                batch.answer(index, .deadlineExpired, "deadline \(deadline) passed \(now - deadline) ms before processing", rule: "deadline")
            }
        }

        // 2. Open every SPC on the pool.
        let toOpen = batch.pending
        let server = keyServer
        let opened = await pool.map(toOpen.map { jobs[$0].spc }) { spc -> Result<SPCRequest, FairPlayError> in
            do throws(FairPlayError) { return .success(try server.open(spc)) } catch { return .failure(error) }
        }
        for (index, result) in zip(toOpen, opened) {
            switch result {
            case .success(let request): batch.work[index].request = request
            case .failure(let error): batch.answer(index, KSMStatus(error.status), error.reason, rule: "fairplay:open")
            }
        }

        // 2b. Anti-replay, for tenants that set a window (one round trip, none when no tenant does).
        if let guards { await claimSPCs(&batch, guards: guards) }

        // 3. One store round trip for the whole batch.
        await fetch(&batch, now: now)

        // 5. One lease round trip for the jobs that carry a playback session.
        await acquireLeases(&batch, now: now)

        // 6. Build the CKCs on the pool.
        await buildCKCs(&batch, now: now)

        let replies = batch.finish()
        // 7. Keep every final reply before it is published, so a redelivery gets the same bytes.
        guard let guards else { return replies }
        return await storeReplies(replies, jobs: jobs, guards: guards)
    }

    // MARK: Steps

    /// Steps 3 and 4: fetch, then the per-job checks and the policy decision, which need no further
    /// round trip (except, rarely, a rental start the first read skipped: see ``CachingLicenseStore``).
    private func fetch(_ batch: inout LicenseBatch, now: Int64) async {
        let indices = batch.pending
        if indices.isEmpty { return }
        let requests = indices.map { index in
            let job = batch.jobs[index]
            // `request` is set for every pending job after step 2.
            let request = batch.work[index].request!
            return StoreRequest(tenant: job.tenant, account: job.account, assetID: Array(request.assetID), keyPeriod: job.keyPeriod,
                                accountReads: request.payload.sync != nil ? .offlineRecords : .rentalStart)
        }
        guard var results = await read(requests, &batch, during: "fetch") else { return }
        let unprovisioned = await answerIfUnprovisioned(indices, results, &batch)
        var documents = PolicyDocumentCache()
        var tokenKeyrings: [StoreIdentifier: Result<EntitlementKeyring, KeyEncryptionKeyring.KeyringError>] = [:]
        var evaluations: [Int: LicenseEvaluation] = [:]
        var rereads: [Int] = []
        for (position, index) in indices.enumerated() where !unprovisioned.contains(index) {
            guard let evaluation = check(index, results[position], in: &batch, now: now, documents: &documents, tokenKeyrings: &tokenKeyrings) else { continue }
            if let policy = evaluation.policy, policy.rentalDurationSeconds > 0, !results[position].rentalStartRead {
                rereads.append(position)
            } else {
                evaluations[index] = evaluation
            }
        }
        if !rereads.isEmpty {
            // A rental duration the cached documents did not show (a token claim set it): read the
            // starts for those jobs alone, then judge them again.
            var again = rereads.map { requests[$0] }
            for i in again.indices { again[i].accountReads = .rentalStart }
            guard let fresh = await read(again, &batch, during: "fetch") else { return }
            for (position, result) in zip(rereads, fresh) {
                results[position] = result
                if let evaluation = check(indices[position], result, in: &batch, now: now, documents: &documents, tokenKeyrings: &tokenKeyrings) {
                    evaluations[indices[position]] = evaluation
                }
            }
        }
        for (index, evaluation) in evaluations {
            apply(evaluation, to: index, in: &batch)
        }
    }

    /// A store that lost its data (Redis restarted without persistence) knows no tenant at all: a
    /// final `unknownTenant` would be stored and outlive the re-provisioning. When some tenant of the
    /// batch is unknown, the provisioning marker is asked (one round trip, on this rare path only);
    /// without it those jobs are answered retriable. Returns the jobs answered here.
    private func answerIfUnprovisioned(_ indices: [Int], _ results: [StoreResult], _ batch: inout LicenseBatch) async -> Set<Int> {
        let unknown = zip(indices, results).filter { $0.1.tenant == nil }.map(\.0)
        if unknown.isEmpty { return [] }
        let provisioned: Bool
        do {
            provisioned = try await store.isProvisioned()
        } catch {
            logger.warning("store provisioning check failed", metadata: [LoggingKeys.reason: "\(StoreFailureReason.logMessage(error))"])
            provisioned = false
        }
        if provisioned { return [] }
        logger.error("the license store holds no provisioning marker: it lost its data or was never provisioned; answering unknown tenants retriable",
                     metadata: ["jobs": "\(unknown.count)"])
        for index in unknown {
            batch.answer(index, .storeUnavailable, StoreFailureReason.notProvisioned, rule: StoreFailureReason.notProvisionedRule)
        }
        return Set(unknown)
    }

    /// One `store.fetch`; on failure every pending job is answered and nil returned.
    private func read(_ requests: [StoreRequest], _ batch: inout LicenseBatch, during call: String) async -> [StoreResult]? {
        do {
            let results = try await store.fetch(requests)
            guard results.count == requests.count else {
                throw LicenseStoreError(.backend, "store answered \(results.count) of \(requests.count) reads")
            }
            return results
        } catch {
            batch.failAll(storeError: error, during: call)
            return nil
        }
    }

    /// Step 4 for one job: tenant, certificate, key present, policy present; then the policy
    /// decision. Returns nil when the job was answered here.
    private func check(
        _ index: Int, _ result: StoreResult, in batch: inout LicenseBatch, now: Int64, documents: inout PolicyDocumentCache,
        tokenKeyrings: inout [StoreIdentifier: Result<EntitlementKeyring, KeyEncryptionKeyring.KeyringError>]
    ) -> LicenseEvaluation? {
        let job = batch.jobs[index]
        let request = batch.work[index].request!
        if let refusal = Self.preflight(job: job, request: request, result: result) {
            batch.answer(index, refusal.status, refusal.reason, rule: refusal.rule)
            return nil
        }
        guard let tenant = result.tenant else { return nil }  // preflight checked it (and a key or a seed)
        var ring: EntitlementKeyring?
        if !job.entitlement.isEmpty {
            let known = tokenKeyrings[tenant.id] ?? Self.tokenKeyring(tenant, keyring: keyring)
            tokenKeyrings[tenant.id] = known
            switch known {
            case .success(let r): ring = r
            case .failure(let error):
                batch.answer(index, .keyUnwrapFailed, "entitlement secrets: \(error.reason)", rule: "token:keyring")
                return nil
            }
        }
        batch.work[index].tenant = tenant
        batch.work[index].wrappedKey = result.contentKey  // nil: derived from the tenant's key seed
        return LicenseEvaluation.evaluate(job: job, request: request, tenant: tenant, stored: result, now: now, documents: &documents, tokenKeyring: ring)
    }

    /// A refusal decided before policy: who asks, and what the store holds.
    struct Preflight: Sendable {
        var status: KSMStatus
        var rule: String
        var reason: String
    }

    /// Tenant known, owns the SPC's certificate (tenant isolation), content key and some policy
    /// stored. Nil when the job may go on to the policy engine.
    static func preflight(job: LicenseJob, request: SPCRequest, result: StoreResult) -> Preflight? {
        guard let tenant = result.tenant else {
            return Preflight(status: .unknownTenant, rule: "tenant:unknown", reason: "tenant \(job.tenant) is not known")
        }
        let spcHash = request.container.certificateHash
        let owned = tenant.certificateHashes.contains { Array($0) == Array(spcHash) }
            || tenant.certificateHashes.contains(FairPlayCrypto.sha256(request.credential.certificateDER))
        guard owned else {
            return Preflight(status: .certificateNotOwnedByTenant, rule: "tenant:certificate",
                             reason: "the SPC is for certificate \(HexEncoding.encode(spcHash)), which tenant \(job.tenant) does not own")
        }
        guard result.contentKey != nil || tenant.keySeed != nil else {
            return Preflight(status: .noContentKey, rule: "asset:no-content-key", reason: "no content key for this asset ID")
        }
        guard result.hasPolicy else {
            return Preflight(status: .noPolicy, rule: "policy:missing", reason: "neither the asset nor tenant \(job.tenant) has a policy")
        }
        return nil
    }

    /// The tenant's token secrets, unwrapped under its KEK (once per batch and tenant).
    static func tokenKeyring(_ tenant: TenantRecord, keyring: KeyEncryptionKeyring) -> Result<EntitlementKeyring, KeyEncryptionKeyring.KeyringError> {
        var secrets: [String: [UInt8]] = [:]
        for (kid, wrapped) in tenant.entitlementSecrets {
            do throws(KeyEncryptionKeyring.KeyringError) {
                secrets[kid.value] = try keyring.unwrap(secret: wrapped, with: tenant.keyEncryptionKeyID)
            } catch {
                return .failure(error)
            }
        }
        do throws(EntitlementKeyring.InvalidKey) {
            return .success(try EntitlementKeyring(secrets))
        } catch {
            return .failure(KeyEncryptionKeyring.KeyringError(error.description))
        }
    }

    /// Answers a refused job, or records an issued one's terms and unwraps its key.
    private func apply(_ evaluation: LicenseEvaluation, to index: Int, in batch: inout LicenseBatch) {
        let decision = evaluation.decision
        guard let terms = decision.terms else {
            batch.answer(index, evaluation.refusalStatus ?? .invalidPolicy, decision.reason, rule: decision.rule)
            return
        }
        batch.work[index].evaluation = evaluation
        batch.work[index].rule = decision.rule
        batch.work[index].reason = decision.reason
        guard let wrapped = batch.work[index].wrappedKey else {
            applySeededKey(includesContentKey: terms.includesContentKey, to: index, in: &batch)
            return
        }
        batch.work[index].contentIV = wrapped.iv
        // No key for playback state 2 or a sync check-in: it is never unwrapped.
        guard terms.includesContentKey else { return }
        do {
            batch.work[index].contentKey = try keyring.contentKey(wrapped)
        } catch {
            batch.answer(index, .keyUnwrapFailed, error.reason, rule: "key:unwrap")
        }
    }

    /// No stored key, and the tenant has a key seed: the key and IV are derived (docs/key-seeds.md)
    /// with no further read; a stored key always wins over the seed.
    private func applySeededKey(includesContentKey: Bool, to index: Int, in batch: inout LicenseBatch) {
        guard let tenant = batch.work[index].tenant, let seed = tenant.keySeed, let request = batch.work[index].request else { return }
        var derived: ContentKeyDerivation.DerivedKey
        do {
            derived = try keyring.deriveContentKey(seed: seed, with: tenant.keyEncryptionKeyID, assetID: Array(request.assetID),
                                                   keyPeriod: batch.jobs[index].keyPeriod)
        } catch {
            batch.answer(index, .keyUnwrapFailed, error.reason, rule: "key:seed")
            return
        }
        batch.work[index].contentIV = derived.iv
        if includesContentKey { batch.work[index].contentKey = SecretBytes(taking: &derived.key) }
        FairPlayCrypto.cleanse(&derived.key)
    }

    /// Step 5: ONE write round trip (`acquireLeases`) for every pending job whose decision takes
    /// a lease slot, registers a device, starts a rental or records offline licenses.
    private func acquireLeases(_ batch: inout LicenseBatch, now: Int64) async {
        var indices: [Int] = []
        var requests: [LeaseRequest] = []
        for index in batch.pending {
            guard let write = batch.work[index].evaluation?.write else { continue }
            indices.append(index)
            requests.append(write)
        }
        if requests.isEmpty { return }
        let results: [LeaseResult]
        do {
            results = try await store.acquireLeases(requests)
            guard results.count == requests.count else {
                throw LicenseStoreError(.backend, "store answered \(results.count) of \(requests.count) lease requests")
            }
        } catch {
            batch.failAll(storeError: error, during: "acquireLeases")
            return
        }
        for (index, result) in zip(indices, results) {
            switch result {
            case .granted(let at), .renewed(let at), .held(let at), .grantedEndingOldest(let at, _):
                batch.work[index].leaseExpiresAt = at
                batch.work[index].leaseRenewed = if case .renewed = result { true } else { false }
                if case .grantedEndingOldest(_, let ended) = result {
                    batch.work[index].reason += "; the account was full: stream \(ended) ended (its renewal will be refused)"
                }
            case .recorded:
                break
            case .refused(let reason, let active, let limit):
                let account = batch.jobs[index].account
                switch reason {
                case .deviceLimitReached:
                    batch.answer(index, .deviceLimitReached, "account \(account) has registered \(active) of \(limit) devices", rule: PolicyRefusal.deviceLimitReached.rule)
                case .streamEnded:
                    batch.answer(index, .streamEnded, "this stream was ended by a newer one on account \(account)", rule: PolicyRefusal.streamEnded.rule)
                case .noLiveSlot:
                    batch.answer(index, .leaseRenewalNotAllowed, "the session holds no live lease and the policy does not renew leases", rule: PolicyRefusal.leaseRenewalNotAllowed.rule)
                default:
                    batch.answer(index, .tooManyStreams, "account \(account) holds \(active) of \(limit) concurrent streams", rule: PolicyRefusal.tooManyStreams.rule)
                }
            }
        }
    }

    /// Step 6: build every CKC on the pool, from the decision's terms.
    private func buildCKCs(_ batch: inout LicenseBatch, now: Int64) async {
        let indices = batch.pending
        if indices.isEmpty { return }
        // Fields are read through the array in place: copying a whole `Work` out retains each of its
        // references once more per job.
        let items: [CKCJob] = indices.map { index in
            // Every pending job has an issued evaluation after step 4.
            let evaluation = batch.work[index].evaluation!
            let terms = evaluation.decision.terms!
            var duration = terms.duration.contentKeyDuration
            if let expiry = batch.work[index].leaseExpiresAt {
                // The CKC's lease ends with the slot: a renewal, a hold or a redelivered job gets what remains.
                let remaining = UInt32(clamping: max(1, (expiry - now + 999) / 1000))
                duration = switch terms.duration {
                case .leaseAndRental(_, let rental): .leaseAndRental(lease: remaining, rental: rental)
                default: .lease(remaining)
                }
            }
            return CKCJob(
                request: batch.work[index].request!, key: batch.work[index].contentKey, iv: batch.work[index].contentIV, duration: duration,
                offlineKey: terms.duration.offlineKey(streamID: evaluation.streamID, titleID: evaluation.titleID),
                hdcp: terms.hdcp, securityLevel: terms.requiredSecurityLevel, audio: evaluation.policy?.contentType == .audio)
        }
        let server = keyServer
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
        for (index, result) in zip(indices, built) {
            switch result {
            case .success(let ckc):
                var reason = batch.work[index].reason
                if let expiry = batch.work[index].leaseExpiresAt {
                    reason += batch.work[index].leaseRenewed ? "; lease renewed until \(expiry)" : "; lease until \(expiry)"
                }
                // A check-in is answered without its CKC, as Apple's SDK 26 answers one.
                batch.answer(index, .ok, reason, rule: batch.work[index].rule, ckc: batch.jobs[index].checkIn ? nil : ckc)
            case .failure(let error):
                batch.answer(index, KSMStatus(error.status), error.reason, rule: "fairplay:ckc")
            }
        }
    }
}

/// One batch in flight: the jobs, what is known of each, and the replies decided so far.
/// Internal (not private) so the guards' extension can answer jobs.
struct LicenseBatch {
    struct Work {
        var request: SPCRequest?
        var tenant: TenantRecord?
        var wrappedKey: WrappedContentKey?
        /// Set for jobs the policy issues.
        var evaluation: LicenseEvaluation?
        var contentKey: SecretBytes?
        var contentIV: [UInt8] = []
        var rule = ""
        var reason = ""
        var leaseExpiresAt: Int64?
        var leaseRenewed = false
    }

    let jobs: [LicenseJob]
    var work: [Work]
    /// Per job: on its first delivery, so no reply can be stored for it yet (admission skips the lookup).
    var firstDelivery: [Bool]
    /// Each tenant's guard settings, when the guards read them (step 0).
    var guardSettings: [StoreIdentifier: GuardSettings] = [:]
    private var replies: [LicenseReply?]
    private let logger: Logger
    /// Per-job log lines are debug level: below it nothing per job is formatted at all.
    private let logsJobs: Bool

    init(jobs: [LicenseJob], logger: Logger) {
        self.jobs = jobs
        self.logger = logger
        logsJobs = logger.logLevel <= .debug
        work = Array(repeating: Work(), count: jobs.count)
        firstDelivery = Array(repeating: false, count: jobs.count)
        replies = Array(repeating: nil, count: jobs.count)
    }

    /// The batch's logger with job `index`'s request ID.
    private func logger(for index: Int) -> Logger {
        var log = logger
        log[metadataKey: LoggingKeys.requestID] = .string(jobs[index].id.value)
        return log
    }

    /// Indices of jobs not yet answered, in input order.
    var pending: [Int] { replies.indices.filter { replies[$0] == nil } }

    /// Decides job `index`'s reply (once) and logs it; releases its key.
    mutating func answer(_ index: Int, _ status: KSMStatus, _ reason: String, rule: String, ckc: [UInt8]? = nil, retryAfterMilliseconds: Int64? = nil) {
        guard replies[index] == nil else { return }
        let job = jobs[index]
        let request = work[index].request
        replies[index] = LicenseReply(
            id: job.id.value, status: status, reason: reason, ckc: ckc,
            leaseExpiresAt: ckc != nil ? work[index].leaseExpiresAt : nil,
            assetID: request.map { Array($0.assetID) }, hu: request?.hu,
            tenant: job.tenant.value, account: job.account.value, rule: rule,
            retryAfterMilliseconds: retryAfterMilliseconds)
        work[index].contentKey = nil
        guard logsJobs else { return }
        var metadata: Logger.Metadata = [
            LoggingKeys.tenant: .string(job.tenant.value), LoggingKeys.status: .string(status.name), LoggingKeys.rule: .string(rule),
        ]
        if status != .ok { metadata[LoggingKeys.reason] = .string(reason) }
        if let expiry = work[index].leaseExpiresAt, ckc != nil { metadata[LoggingKeys.leaseExpiresAt] = "\(expiry)" }
        logger(for: index).debug("job answered", metadata: metadata)
    }

    /// Answers job `index` with a reply stored when the job was first answered (published verbatim).
    mutating func answer(_ index: Int, duplicate reply: LicenseReply) {
        guard replies[index] == nil else { return }
        replies[index] = reply
        guard logsJobs else { return }
        logger(for: index).debug("job answered with its stored reply", metadata: [LoggingKeys.status: .string(reply.status.name), LoggingKeys.rule: .string(reply.rule)])
    }

    /// A store call failed: every job still pending gets the same answer (fail closed).
    mutating func failAll(storeError error: any Error, during call: String) {
        let retriable = (error as? LicenseStoreError)?.isRetriable ?? false
        let message = StoreFailureReason.logMessage(error)
        let pending = self.pending
        logger.warning("store \(call) failed; answering \(pending.count) jobs", metadata: [
            LoggingKeys.reason: "\(message)", LoggingKeys.retriable: "\(retriable)",
        ])
        for index in pending {
            if retriable {
                answer(index, .storeUnavailable, StoreFailureReason.reason(during: call, retriable: true), rule: "store:unavailable")
            } else {
                answer(index, KSMStatus(.internalError), StoreFailureReason.reason(during: call, retriable: false), rule: "store:error")
            }
        }
    }

    /// All replies, in input order. Any job left unanswered (a bug) gets an internal error.
    mutating func finish() -> [LicenseReply] {
        for index in pending {
            answer(index, KSMStatus(.internalError), "job left unanswered by the pipeline", rule: "internal")
        }
        return replies.map { $0! }
    }
}
