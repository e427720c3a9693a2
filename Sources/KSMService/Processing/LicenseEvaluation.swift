import FairPlay
import Licensing

/// One job judged against the stored policy: pure, so the worker and `ksm admin explain` share it.
///
/// The inputs are what the batch already has (the opened SPC, the store's answer, the clock and the
/// tenant's token keyring); the output is the engine's decision, the layers and effective policy that
/// led to it, and the per-account write the decision needs (``write``), which the worker sends in the
/// batch's single write round trip and `explain` never sends.
package struct LicenseEvaluation: Sendable {
    /// The engine's decision (or a refusal made before the engine: invalid policy, token keyring).
    package var decision: PolicyDecision
    /// The resolved policy; nil when the layers did not resolve.
    package var policy: EffectivePolicy?
    /// The layers as read (the entitlement layer from a verified token's `policy` claim).
    package var layers: PolicyLayers
    /// What the token amounted to.
    package var entitlement: EntitlementState
    /// The status when refused before or by the engine; nil when issued.
    package var refusalStatus: KSMStatus?
    /// The per-account write (lease slot, device, rental start, offline records); nil when the
    /// decision needs none.
    package var write: LeaseRequest?
    /// The offline key's stream and title IDs (dual expiry only).
    package var streamID: [UInt8] = []
    package var titleID: [UInt8] = []

    /// Judges one job.
    /// - Parameters:
    ///   - documents: the batch's parse cache.
    ///   - tokenKeyring: the tenant's unwrapped token secrets; nil when the job carries no token.
    static func evaluate(
        job: LicenseJob, request: SPCRequest, tenant: TenantRecord, stored: StoreResult, now: Int64,
        documents: inout PolicyDocumentCache, tokenKeyring: EntitlementKeyring?
    ) -> LicenseEvaluation {
        let assetID = Array(request.assetID)
        var layers = PolicyLayers()
        func refused(_ status: KSMStatus, _ rule: String, _ reason: String, entitlement: EntitlementState = .absent) -> LicenseEvaluation {
            LicenseEvaluation(
                decision: PolicyDecision(refusal: nil, terms: nil, rule: rule, reason: reason), policy: nil, layers: layers,
                entitlement: entitlement, refusalStatus: status, write: nil)
        }
        // Stored layers.
        var places = PolicyDocumentCache.StoredLayers()
        for (bytes, name) in [(stored.tenantPolicy, "tenant"), (stored.assetPolicy, "asset"), (stored.keyPeriodPolicy, "key period")] {
            guard let (place, parsed) = documents.document(bytes) else { continue }
            switch parsed {
            case .failure(let error): return refused(.invalidPolicy, "policy:invalid", "\(name) policy: \(error.description)")
            case .success(let d):
                switch name {
                case "tenant": (layers.tenant, places.tenant) = (d, place)
                case "asset": (layers.asset, places.asset) = (d, place)
                default: (layers.keyPeriod, places.keyPeriod) = (d, place)
                }
            }
        }
        // The token: verified before the layers resolve, since its `policy` claim is the top layer.
        var entitlement = EntitlementState.absent
        if !job.entitlement.isEmpty {
            let ring = tokenKeyring ?? (try? EntitlementKeyring([:]))
            do throws(EntitlementError) {
                guard let ring else { throw .unknownKeyID }
                let token = try EntitlementToken.verify(
                    job.entitlement, keyring: ring,
                    expecting: .init(account: job.account.value, assetID: assetID, tenant: job.tenant.value),
                    nowMilliseconds: now)
                entitlement = .verified
                layers.entitlement = token.claims.policy
            } catch {
                entitlement = .rejected(error)
            }
        }
        // The tenant record's stream limit sits under the documents.
        let policy: EffectivePolicy
        switch documents.effectivePolicy(layers, stored: places, tenantStreamLimit: tenant.maxConcurrentStreams) {
        case .success(let resolved): policy = resolved
        case .failure(let error): return refused(.invalidPolicy, "policy:invalid", error.description, entitlement: entitlement)
        }
        let input = PolicyInput(
            policy: policy, client: ClientFacts(request.payload), nowMilliseconds: now, entitlement: entitlement,
            requestsPersistence: job.persistent, checkIn: job.checkIn, rentalStartedAtMilliseconds: stored.rentalStartedAt)
        let decision = PolicyEngine.evaluate(input)
        var out = LicenseEvaluation(
            decision: decision, policy: policy, layers: layers, entitlement: entitlement,
            refusalStatus: decision.refusal.map(KSMStatus.init), write: nil)
        guard let terms = decision.terms else { return out }

        // The write the decision needs.
        var write = LeaseRequest(
            requestID: job.id, tenant: job.tenant, account: job.account, deviceID: request.hu,
            sessionID: request.payload.playback?.sessionID ?? 0, maxConcurrentStreams: Self.limit(policy.maxStreams),
            leaseDurationSeconds: 0, nowMilliseconds: now, slot: .none, endOldestWhenFull: policy.whenFull == .endOldest)
        switch terms.leaseSlot {
        case .none: break
        case .acquire(let seconds), .renew(let seconds):
            write.slot = .acquireOrRenew
            write.leaseDurationSeconds = seconds
            write.viewedAssetID = assetID  // counted for the expected rotation load
            if case .renew = terms.leaseSlot { write.expectsLiveSlot = true }
        case .hold: write.slot = .hold
        }
        if terms.registersDevice { write.deviceLimit = Self.limit(policy.deviceLimit) }
        if terms.startsRental { write.rentalAssetID = assetID }
        if case .dualExpiry = terms.duration {
            out.streamID = job.streamID ?? Array(FairPlayCrypto.sha256(Array("stream|".utf8) + Array(job.id.value.utf8)).prefix(16))
            out.titleID = job.titleID ?? Array(FairPlayCrypto.sha256(Array("title|".utf8) + assetID).prefix(16))
            if let record = OfflineLicenseRecord.issued(
                terms: terms, streamID: out.streamID, titleID: out.titleID, assetID: assetID,
                deviceID: request.hu, nowMilliseconds: now)
            {
                write.offlineRecords = [record]
            }
        }
        if let sync = request.payload.sync {
            let outcome = OfflineSync.apply(
                sync, deviceID: request.hu, records: stored.offlineRecords, expectedChallenge: job.serverChallenge, nowMilliseconds: now)
            if outcome.challengeMatches == false {
                // A sync that does not answer the challenge the platform issued is refused: nothing recorded.
                out.decision = .refuse(.syncChallengeMismatch, "the sync SPC's server challenge is not the one issued for this job")
                out.refusalStatus = .syncChallengeMismatch
                out.write = nil
                return out
            }
            write.offlineRecords = outcome.updated
            write.invalidatedStreamIDs = outcome.invalidatedStreamIDs
            out.decision.reason +=
                "; sync \(outcome.actions.map(\.rawValue).joined(separator: "+")): \(outcome.updated.count) record(s) updated, \(outcome.invalidatedStreamIDs.count) stream ID(s) invalidated"
        }
        let needed =
            write.slot != .none || write.deviceLimit != nil || write.rentalAssetID != nil || !write.offlineRecords.isEmpty
            || !write.invalidatedStreamIDs.isEmpty
        out.write = needed ? write : nil
        return out
    }

    /// A policy limit as the store's integer (unlimited: `Int32.max`, which no account reaches).
    static func limit(_ limit: PolicyLimit) -> Int {
        switch limit {
        case .unlimited: Int(Int32.max)
        case .maximum(let n): n
        }
    }
}
