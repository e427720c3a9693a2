import FairPlay
import Licensing

extension LicenseProcessor {
    /// Judges one job against the stored policy exactly as ``process(_:now:)`` would, and stops
    /// before anything has an effect: no lease slot, device, rental start or offline record is
    /// written and no CKC is built. Reads are the batch's single `fetch`. For `ksm admin explain`.
    package func explain(_ job: LicenseJob, now: Int64 = LicenseProcessor.currentTimeMilliseconds()) async -> PolicyExplanation {
        var out = PolicyExplanation(job: job, now: now)
        let request: SPCRequest
        do throws(FairPlayError) { request = try keyServer.open(job.spc) } catch {
            out.refuse(KSMStatus(error.status), rule: "fairplay:open", reason: error.reason)
            return out
        }
        out.assetID = Array(request.assetID)
        out.client = ClientFacts(request.payload)
        let storeRequest = StoreRequest(
            tenant: job.tenant, account: job.account, assetID: Array(request.assetID), keyPeriod: job.keyPeriod,
            accountReads: request.payload.sync != nil ? .offlineRecords : .rentalStart)
        let result: StoreResult
        do {
            guard let first = try await store.fetch([storeRequest]).first else { throw LicenseStoreError(.backend, "store answered no read") }
            result = first
        } catch {
            // `ksm admin explain` is an operator's tool: the store's own message helps there.
            out.refuse(.storeUnavailable, rule: "store:unavailable", reason: "license store unavailable: \(StoreFailureReason.logMessage(error))")
            return out
        }
        out.rentalStartedAt = result.rentalStartedAt
        let tenant: TenantRecord
        switch Self.preflight(job: job, request: request, result: result) {
        case .refused(let status, let rule, let reason):
            out.refuse(status, rule: rule, reason: reason)
            return out
        case .cleared(let cleared, _):
            tenant = cleared
        }
        var ring: EntitlementKeyring?
        if !job.entitlement.isEmpty {
            switch Self.tokenKeyring(tenant, keyring: keyring) {
            case .success(let r): ring = r
            case .failure(let error):
                out.refuse(.keyUnwrapFailed, rule: "token:keyring", reason: "entitlement secrets: \(error.reason)")
                return out
            }
        }
        var documents = PolicyDocumentCache()
        out.evaluation = LicenseEvaluation.evaluate(
            job: job, request: request, tenant: tenant, stored: result, now: now, documents: &documents, tokenKeyring: ring)
        return out
    }
}
