import FairPlay
import Licensing
import Wire

/// Stage 4 of the pipeline (``LicenseProcessor``): ONE `store.fetch` for the batch, then per job the
/// checks and the policy decision, which need no further round trip (except, rarely, a rental start
/// the first read skipped: see ``CachingLicenseStore``); then each decision applied.
extension LicenseProcessor {
    /// Reads, judges and applies: a refused job is answered; an issued one goes on with its key.
    func judge(_ opened: [OpenedJob], now: Int64, answering replies: inout BatchReplies) async -> [IssuedJob] {
        if opened.isEmpty { return [] }
        let jobs = replies.jobs
        let requests = opened.map { job in
            Self.storeRequest(jobs[job.index], job.request, reads: job.request.payload.sync != nil ? .offlineRecords : .rentalStart)
        }
        let results: [StoreResult]
        do {
            results = try await read(requests)
        } catch {
            replies.failAll(opened.lazy.map { ($0.index, $0.request) }, storeError: error, during: "fetch")
            return []
        }
        let unprovisioned = await answerIfUnprovisioned(opened, results, answering: &replies)
        var documents = PolicyDocumentCache()
        var tokenKeyrings: [StoreIdentifier: Result<EntitlementKeyring, KeyEncryptionKeyring.KeyringError>] = [:]
        var judged: [JudgedJob] = []
        judged.reserveCapacity(opened.count)
        // Positions in `judged` of the jobs to read again.
        var rereads: [Int] = []
        for (job, result) in zip(opened, results) where !unprovisioned.contains(job.index) {
            guard let verdict = judge(job, result, now: now, documents: &documents, tokenKeyrings: &tokenKeyrings, answering: &replies) else { continue }
            if verdict.needsRentalStart { rereads.append(judged.count) }
            judged.append(verdict)
        }
        if !rereads.isEmpty {
            // A rental duration the cached documents did not show (a token claim set it): read the
            // starts for those jobs alone, then judge them again.
            let again = rereads.map { position in
                Self.storeRequest(jobs[judged[position].opened.index], judged[position].opened.request, reads: .rentalStart)
            }
            let fresh: [StoreResult]
            do {
                fresh = try await read(again)
            } catch {
                replies.failAll(judged.lazy.map { ($0.opened.index, $0.opened.request) }, storeError: error, during: "fetch")
                return []
            }
            var kept: [JudgedJob] = []
            kept.reserveCapacity(judged.count)
            var next = 0
            for (position, verdict) in judged.enumerated() {
                guard next < rereads.count, rereads[next] == position else {
                    kept.append(verdict)
                    continue
                }
                if let again = judge(verdict.opened, fresh[next], now: now, documents: &documents, tokenKeyrings: &tokenKeyrings, answering: &replies) {
                    kept.append(again)
                }
                next += 1
            }
            judged = kept
        }
        var issued: [IssuedJob] = []
        issued.reserveCapacity(judged.count)
        for verdict in judged {
            if let job = issue(verdict, answering: &replies) { issued.append(job) }
        }
        return issued
    }

    /// One job's read: its tenant, account, asset and key period, and the account records asked for.
    private static func storeRequest(_ job: LicenseJob, _ request: SPCRequest, reads: AccountReads) -> StoreRequest {
        StoreRequest(tenant: job.tenant, account: job.account, assetID: Array(request.assetID), keyPeriod: job.keyPeriod, accountReads: reads)
    }

    /// A store that lost its data (Redis restarted without persistence) knows no tenant at all: a
    /// final `unknownTenant` would be stored and outlive the re-provisioning. When some tenant of the
    /// batch is unknown, the provisioning marker is asked (one round trip, on this rare path only);
    /// without it those jobs are answered retriable. Returns the jobs (batch indices) answered here.
    private func answerIfUnprovisioned(_ opened: [OpenedJob], _ results: [StoreResult], answering replies: inout BatchReplies) async -> Set<Int> {
        let unknown = zip(opened, results).filter { $0.1.tenant == nil }.map(\.0)
        if unknown.isEmpty { return [] }
        let provisioned: Bool
        do {
            provisioned = try await store.isProvisioned()
        } catch {
            logger.warning("store provisioning check failed", metadata: [LoggingKeys.reason: "\(StoreFailureReason.logMessage(error))"])
            provisioned = false
        }
        if provisioned { return [] }
        logger.error(
            "the license store holds no provisioning marker: it lost its data or was never provisioned; answering unknown tenants retriable",
            metadata: ["jobs": "\(unknown.count)"])
        for job in unknown {
            replies.answer(job.index, request: job.request, .storeUnavailable, StoreFailureReason.notProvisioned, rule: StoreFailureReason.notProvisionedRule)
        }
        return Set(unknown.map(\.index))
    }

    /// One `store.fetch`, one result per request.
    private func read(_ requests: [StoreRequest]) async throws -> [StoreResult] {
        let results = try await store.fetch(requests)
        if let error = LicenseStoreError.answerCount(results.count, of: requests.count, "reads") { throw error }
        return results
    }

    /// One job: preflight (tenant, certificate, key or seed, some policy), its token's keyring, then
    /// the policy decision. Returns nil when the job was answered here.
    private func judge(
        _ job: OpenedJob, _ result: StoreResult, now: Int64, documents: inout PolicyDocumentCache,
        tokenKeyrings: inout [StoreIdentifier: Result<EntitlementKeyring, KeyEncryptionKeyring.KeyringError>], answering replies: inout BatchReplies
    ) -> JudgedJob? {
        let licenseJob = replies.jobs[job.index]
        let tenant: TenantRecord
        let key: ContentKeySource
        switch Self.preflight(job: licenseJob, request: job.request, result: result) {
        case .refused(let status, let rule, let reason):
            replies.answer(job.index, request: job.request, status, reason, rule: rule)
            return nil
        case .cleared(let cleared, let source):
            tenant = cleared
            key = source
        }
        var ring: EntitlementKeyring?
        if !licenseJob.entitlement.isEmpty {
            let known = tokenKeyrings[tenant.id] ?? Self.tokenKeyring(tenant, keyring: keyring)
            tokenKeyrings[tenant.id] = known
            switch known {
            case .success(let r): ring = r
            case .failure(let error):
                replies.answer(job.index, request: job.request, .keyUnwrapFailed, "entitlement secrets: \(error.reason)", rule: "token:keyring")
                return nil
            }
        }
        let evaluation = LicenseEvaluation.evaluate(
            job: licenseJob, request: job.request, tenant: tenant, stored: result, now: now,
            documents: &documents, tokenKeyring: ring)
        let rental = evaluation.policy?.rentalDurationSeconds ?? 0
        return JudgedJob(opened: job, key: key, evaluation: evaluation, needsRentalStart: rental > 0 && !result.rentalStartRead)
    }

    /// What the store holds decides before policy: refused, or cleared with the tenant and where the
    /// job's content key comes from.
    enum Preflight: Sendable {
        case refused(status: KSMStatus, rule: String, reason: String)
        case cleared(TenantRecord, ContentKeySource)
    }

    /// Tenant known, owns the SPC's certificate (tenant isolation), content key (or key seed) and some
    /// policy stored. `cleared` when the job may go on to the policy engine.
    static func preflight(job: LicenseJob, request: SPCRequest, result: StoreResult) -> Preflight {
        guard let tenant = result.tenant else {
            return .refused(status: .unknownTenant, rule: "tenant:unknown", reason: "tenant \(job.tenant) is not known")
        }
        let spcHash = request.container.certificateHash
        let owned =
            tenant.certificateHashes.contains { Array($0) == Array(spcHash) }
            || tenant.certificateHashes.contains(FairPlayCrypto.sha256(request.credential.certificateDER))
        guard owned else {
            return .refused(
                status: .certificateNotOwnedByTenant, rule: "tenant:certificate",
                reason: "the SPC is for certificate \(HexEncoding.encode(spcHash)), which tenant \(job.tenant) does not own")
        }
        // A stored key always wins over the seed.
        let key: ContentKeySource
        if let wrapped = result.contentKey {
            key = .stored(wrapped)
        } else if let seed = tenant.keySeed {
            key = .seed(wrapped: seed, keyEncryptionKeyID: tenant.keyEncryptionKeyID)
        } else {
            return .refused(status: .noContentKey, rule: "asset:no-content-key", reason: "no content key for this asset ID")
        }
        guard result.hasPolicy else {
            return .refused(status: .noPolicy, rule: "policy:missing", reason: "neither the asset nor tenant \(job.tenant) has a policy")
        }
        return .cleared(tenant, key)
    }

    /// The tenant's token secrets, unwrapped under its KEK (once per batch and tenant); key IDs stay
    /// apart by their bytes, as the record holds them (no `[String: _]` in between).
    package static func tokenKeyring(_ tenant: TenantRecord, keyring: KeyEncryptionKeyring) -> Result<EntitlementKeyring, KeyEncryptionKeyring.KeyringError> {
        var secrets: [(String, [UInt8])] = []
        // Secrets already unwrapped when a later one fails are wiped here: no keyring takes them.
        func wipe() { for index in secrets.indices { FairPlayCrypto.cleanse(&secrets[index].1) } }
        for (kid, wrapped) in tenant.entitlementSecrets {
            do throws(KeyEncryptionKeyring.KeyringError) {
                secrets.append((kid.value, try keyring.unwrap(secret: wrapped, with: tenant.keyEncryptionKeyID)))
            } catch {
                wipe()
                return .failure(error)
            }
        }
        // The keyring takes the unwrapped buffers as they are (no copy), and wipes them when it goes.
        do throws(EntitlementKeyring.InvalidKey) {
            return .success(try EntitlementKeyring(keyIDsAndSecrets: secrets))
        } catch {
            wipe()
            return .failure(KeyEncryptionKeyring.KeyringError(error.description))
        }
    }

    /// Applies one decision: a refusal is answered; an issued job gets its key, unwrapped or derived
    /// (the IV always, the key only when the terms send it). Returns nil when the job was answered here.
    private func issue(_ verdict: JudgedJob, answering replies: inout BatchReplies) -> IssuedJob? {
        let job = verdict.opened
        let decision = verdict.evaluation.decision
        guard let terms = decision.terms else {
            replies.answer(job.index, request: job.request, verdict.evaluation.refusalStatus ?? .invalidPolicy, decision.reason, rule: decision.rule)
            return nil
        }
        var key: SecretBytes? = nil
        let iv: [UInt8]
        switch verdict.key {
        case .stored(let wrapped):
            iv = wrapped.iv
            // No key for playback state 2 or a sync check-in: it is never unwrapped.
            if terms.includesContentKey {
                do {
                    key = try keyring.contentKey(wrapped)
                } catch {
                    replies.answer(job.index, request: job.request, .keyUnwrapFailed, error.reason, rule: "key:unwrap")
                    return nil
                }
            }
        case .seed(let seed, let keyEncryptionKeyID):
            // Derived with no further read (docs/key-seeds.md).
            var derived: ContentKeyDerivation.DerivedKey
            do {
                derived = try keyring.deriveContentKey(
                    seed: seed, with: keyEncryptionKeyID, assetID: Array(job.request.assetID),
                    keyPeriod: replies.jobs[job.index].keyPeriod)
            } catch {
                replies.answer(job.index, request: job.request, .keyUnwrapFailed, error.reason, rule: "key:seed")
                return nil
            }
            iv = derived.iv
            if terms.includesContentKey { key = SecretBytes(taking: &derived.key) }
            FairPlayCrypto.cleanse(&derived.key)
        }
        return IssuedJob(index: job.index, request: job.request, evaluation: verdict.evaluation, terms: terms, key: key, iv: iv)
    }
}
