import FairPlay
import Foundation
import Licensing
import Logging

/// Turns a batch of license jobs into replies: the worker's core, independent of Kafka.
///
/// For a batch, in this order (docs/worker.md):
/// 1. deadline check: a job whose deadline has passed is answered at once, with no RSA work;
/// 2. every SPC opened with ``KeyServerModule`` on the ``CryptoPool`` (RSA, off the cooperative pool);
/// 3. ONE `store.fetch` for the batch: tenant, wrapped content key for the SPC's asset ID, policy;
/// 4. per job: tenant known, owns the SPC's certificate, key present and unwrapped, policy valid,
///    Apple's default rules for the content type satisfied by the client;
/// 5. ONE `store.acquireLeases` for the jobs whose SPC carries a media playback state TLLV
///    (request ID = job ID, so a redelivered job gets the same answer and takes no second slot);
/// 6. every CKC built on the pool.
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

    public init(keyServer: KeyServerModule, store: any LicenseStore, keyring: KeyEncryptionKeyring, pool: CryptoPool, logger: Logger) {
        self.keyServer = keyServer
        self.store = store
        self.keyring = keyring
        self.pool = pool
        self.logger = logger
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
    public func process(decoded entries: [Result<LicenseJob, LicenseJobError>], now: Int64 = LicenseProcessor.currentTimeMilliseconds()) async -> [LicenseReply] {
        var replies = [LicenseReply?](repeating: nil, count: entries.count)
        var jobs: [LicenseJob] = []
        var positions: [Int] = []
        for (index, entry) in entries.enumerated() {
            switch entry {
            case .success(let job):
                jobs.append(job)
                positions.append(index)
            case .failure(let error):
                let reply = LicenseReply(invalidJob: error)
                var log = logger
                if !reply.id.isEmpty { log[metadataKey: LoggingKeys.requestID] = "\(reply.id)" }
                log.debug("job refused", metadata: [LoggingKeys.status: "\(reply.status.name)", LoggingKeys.rule: "\(reply.rule)", LoggingKeys.reason: "\(reply.reason)"])
                replies[index] = reply
            }
        }
        let processed = await process(jobs, now: now)
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
    public func process(_ jobs: [LicenseJob], now: Int64 = LicenseProcessor.currentTimeMilliseconds()) async -> [LicenseReply] {
        var batch = Batch(jobs: jobs, logger: logger)
        if jobs.isEmpty { return [] }

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

        // 3. One store round trip for the whole batch.
        await fetch(&batch, now: now)

        // 5. One lease round trip for the jobs that carry a playback session.
        await acquireLeases(&batch, now: now)

        // 6. Build the CKCs on the pool.
        await buildCKCs(&batch, now: now)

        return batch.finish()
    }

    // MARK: Steps

    /// Steps 3 and 4: fetch, then the per-job checks that need no further round trip.
    private func fetch(_ batch: inout Batch, now: Int64) async {
        let indices = batch.pending
        if indices.isEmpty { return }
        let requests = indices.map { index in
            let job = batch.jobs[index]
            // `request` is set for every pending job after step 2.
            return StoreRequest(tenant: job.tenant, account: job.account, assetID: Array(batch.work[index].request!.assetID))
        }
        let results: [StoreResult]
        do {
            results = try await store.fetch(requests)
            guard results.count == requests.count else {
                throw LicenseStoreError(.backend, "store answered \(results.count) of \(requests.count) reads")
            }
        } catch {
            batch.failAll(storeError: error, during: "fetch")
            return
        }
        // Most jobs of a batch share a policy document (the tenant default): parse each one once.
        var policies: [[UInt8]: Result<LicensePolicy, LicensePolicy.InvalidPolicy>] = [:]
        for (index, result) in zip(indices, results) {
            check(index, result, in: &batch, policies: &policies)
        }
    }

    /// Step 4 for one job: tenant, certificate, key, policy, Apple's rules.
    private func check(_ index: Int, _ result: StoreResult, in batch: inout Batch, policies: inout [[UInt8]: Result<LicensePolicy, LicensePolicy.InvalidPolicy>]) {
        let job = batch.jobs[index]
        let request = batch.work[index].request!
        guard let tenant = result.tenant else {
            batch.answer(index, .unknownTenant, "tenant \(job.tenant) is not known", rule: "tenant:unknown")
            return
        }
        let spcHash = request.container.certificateHash
        let owned = tenant.certificateHashes.contains { Array($0) == Array(spcHash) }
            || tenant.certificateHashes.contains(FairPlayCrypto.sha256(request.credential.certificateDER))
        guard owned else {
            batch.answer(index, .certificateNotOwnedByTenant,
                         "the SPC is for certificate \(HexEncoding.encode(spcHash)), which tenant \(job.tenant) does not own",
                         rule: "tenant:certificate")
            return
        }
        guard let wrapped = result.contentKey else {
            batch.answer(index, .noContentKey, "no content key for this asset ID", rule: "asset:no-content-key")
            return
        }
        guard let document = result.policy else {
            batch.answer(index, .noPolicy, "neither the asset nor tenant \(job.tenant) has a policy", rule: "policy:missing")
            return
        }
        let parsed = policies[document] ?? {
            let result: Result<LicensePolicy, LicensePolicy.InvalidPolicy>
            do throws(LicensePolicy.InvalidPolicy) { result = .success(try LicensePolicy(json: document)) } catch { result = .failure(error) }
            policies[document] = result
            return result
        }()
        let policy: LicensePolicy
        switch parsed {
        case .success(let p): policy = p
        case .failure(let error):
            batch.answer(index, .invalidPolicy, error.description, rule: "policy:invalid")
            return
        }
        let requirement = AppleDefaultRules.requirement(for: policy.contentType, requestedHDCP: policy.hdcp)
        let rule = "apple-default:\(policy.contentType.rawValue)"
        do {
            try AppleDefaultRules.check(ClientSecurity(request.payload), capabilities: request.payload.capabilities, against: requirement)
        } catch {
            batch.answer(index, KSMStatus(error.status), error.reason, rule: rule)
            return
        }
        var key: [UInt8]
        do {
            key = try keyring.unwrap(wrapped)
        } catch {
            batch.answer(index, .keyUnwrapFailed, error.reason, rule: "key:unwrap")
            return
        }
        batch.work[index].contentKey = SecretBytes(taking: &key)
        batch.work[index].contentIV = wrapped.iv
        batch.work[index].tenant = tenant
        batch.work[index].policy = policy
        batch.work[index].requirement = requirement
        batch.work[index].rule = rule
    }

    /// Step 5: one `acquireLeases` for every pending job with a media playback state TLLV.
    private func acquireLeases(_ batch: inout Batch, now: Int64) async {
        var indices: [Int] = []
        var requests: [LeaseRequest] = []
        for index in batch.pending {
            let work = batch.work[index]
            guard let request = work.request, let playback = request.payload.playback, let tenant = work.tenant else { continue }
            let job = batch.jobs[index]
            indices.append(index)
            requests.append(LeaseRequest(
                requestID: job.id, tenant: job.tenant, account: job.account, deviceID: request.hu,
                sessionID: playback.sessionID, maxConcurrentStreams: tenant.maxConcurrentStreams,
                leaseDurationSeconds: work.policy?.leaseDurationSeconds ?? tenant.leaseDurationSeconds,
                nowMilliseconds: now))
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
            case .granted(let at), .renewed(let at):
                batch.work[index].leaseExpiresAt = at
                batch.work[index].leaseRenewed = if case .renewed = result { true } else { false }
            case .refused(let reason, let active, let limit):
                let why = reason == .tooManyStreams
                    ? "account \(batch.jobs[index].account) holds \(active) of \(limit) concurrent streams"
                    : "lease refused (\(reason)): \(active) active of \(limit)"
                batch.answer(index, .tooManyStreams, why, rule: "lease:too-many-streams")
            }
        }
    }

    /// Step 6: build every CKC on the pool.
    private func buildCKCs(_ batch: inout Batch, now: Int64) async {
        let indices = batch.pending
        if indices.isEmpty { return }
        let items: [CKCJob] = indices.map { index in
            let work = batch.work[index]
            var duration: ContentKeyDuration?
            if let expiry = work.leaseExpiresAt {
                // The CKC's lease ends with the slot: a renewal (or a redelivered job) gets what remains.
                let remaining = (expiry - now + 999) / 1000
                duration = .lease(UInt32(clamping: max(1, remaining)))
            }
            return CKCJob(
                request: work.request!, key: work.contentKey!, iv: work.contentIV, duration: duration,
                requirement: work.requirement!, audio: work.policy?.contentType == .audio)
        }
        let server = keyServer
        let built = await pool.map(items) { item -> Result<[UInt8], FairPlayError> in
            var key = item.key.copy()
            defer { FairPlayCrypto.cleanse(&key) }
            do throws(FairPlayError) {
                let content = CKCContent(
                    contentKey: key, contentIV: item.iv, keyDuration: item.duration, hdcp: item.requirement.hdcp,
                    requiredSecurityLevel: item.requirement.securityLevel, libraryContentType: item.audio ? 3 : 1)
                return .success(try server.makeCKC(for: item.request, content))
            } catch {
                return .failure(error)
            }
        }
        for (index, result) in zip(indices, built) {
            let work = batch.work[index]
            switch result {
            case .success(let ckc):
                var reason = "license issued"
                if let expiry = work.leaseExpiresAt {
                    reason += work.leaseRenewed ? "; lease renewed until \(expiry)" : "; lease granted until \(expiry)"
                }
                batch.answer(index, .ok, reason, rule: work.rule, ckc: ckc)
            case .failure(let error):
                batch.answer(index, KSMStatus(error.status), error.reason, rule: "fairplay:ckc")
            }
        }
    }
}

/// What a pool thread needs to build one CKC.
private struct CKCJob: Sendable {
    let request: SPCRequest
    let key: SecretBytes
    let iv: [UInt8]
    let duration: ContentKeyDuration?
    let requirement: AppleDefaultRules.Requirement
    let audio: Bool
}

/// One batch in flight: the jobs, what is known of each, and the replies decided so far.
private struct Batch {
    struct Work {
        var request: SPCRequest?
        var tenant: TenantRecord?
        var policy: LicensePolicy?
        var requirement: AppleDefaultRules.Requirement?
        var contentKey: SecretBytes?
        var contentIV: [UInt8] = []
        var rule = ""
        var leaseExpiresAt: Int64?
        var leaseRenewed = false
    }

    let jobs: [LicenseJob]
    var work: [Work]
    private var replies: [LicenseReply?]
    private let logger: Logger
    private let loggers: [Logger]

    init(jobs: [LicenseJob], logger: Logger) {
        self.jobs = jobs
        self.logger = logger
        work = Array(repeating: Work(), count: jobs.count)
        replies = Array(repeating: nil, count: jobs.count)
        loggers = jobs.map { job in
            var log = logger
            log[metadataKey: LoggingKeys.requestID] = "\(job.id)"
            return log
        }
    }

    /// Indices of jobs not yet answered, in input order.
    var pending: [Int] { replies.indices.filter { replies[$0] == nil } }

    /// Decides job `index`'s reply (once) and logs it; releases its key.
    mutating func answer(_ index: Int, _ status: KSMStatus, _ reason: String, rule: String, ckc: [UInt8]? = nil) {
        guard replies[index] == nil else { return }
        let job = jobs[index]
        let request = work[index].request
        replies[index] = LicenseReply(
            id: job.id.value, status: status, reason: reason, ckc: ckc,
            leaseExpiresAt: ckc != nil ? work[index].leaseExpiresAt : nil,
            assetID: request.map { Array($0.assetID) }, hu: request?.hu,
            tenant: job.tenant.value, account: job.account.value, rule: rule)
        work[index].contentKey = nil
        var metadata: Logger.Metadata = [
            LoggingKeys.tenant: "\(job.tenant)", LoggingKeys.status: "\(status.name)", LoggingKeys.rule: "\(rule)",
        ]
        if status != .ok { metadata[LoggingKeys.reason] = "\(reason)" }
        if let expiry = work[index].leaseExpiresAt, ckc != nil { metadata[LoggingKeys.leaseExpiresAt] = "\(expiry)" }
        loggers[index].debug("job answered", metadata: metadata)
    }

    /// A store call failed: every job still pending gets the same answer (fail closed).
    mutating func failAll(storeError error: any Error, during call: String) {
        let storeError = error as? LicenseStoreError
        let retriable = storeError?.isRetriable ?? false
        let message = storeError?.message ?? "\(error)"
        let pending = self.pending
        logger.warning("store \(call) failed; answering \(pending.count) jobs", metadata: [
            LoggingKeys.reason: "\(message)", LoggingKeys.retriable: "\(retriable)",
        ])
        for index in pending {
            if retriable {
                answer(index, .storeUnavailable, "store unavailable during \(call): \(message)", rule: "store:unavailable")
            } else {
                answer(index, KSMStatus(.internalError), "store error during \(call): \(message)", rule: "store:error")
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
