import Synchronization

/// A ``JobGuardStore`` in process memory, for the demo and tests; same semantics as the Redis one.
///
/// Rate windows follow the caller's clock (`nowMilliseconds`, so tests control them); stored
/// replies and SPC claims lapse on this process's monotonic clock, since they carry only a TTL.
/// `Sendable`: all state sits behind one `Mutex`, held briefly and never across a suspension.
package final class InMemoryJobGuardStore: JobGuardStore {
    private struct AccountKey: Hashable {
        var tenant: StoreIdentifier
        var account: StoreIdentifier
    }

    private struct ReplyKey: Hashable {
        var account: AccountKey
        var jobID: StoreIdentifier
    }

    private struct ClaimKey: Hashable {
        var tenant: StoreIdentifier
        var transactionID: UInt64?
        var digest: [UInt8]
    }

    private struct State {
        var settings: [StoreIdentifier: GuardSettings] = [:]
        var replies: [ReplyKey: (answer: StoredAnswer, lapsesAt: ContinuousClock.Instant)] = [:]
        var claims: [ClaimKey: (jobID: StoreIdentifier, lapsesAt: ContinuousClock.Instant)] = [:]
        /// Per account: (window index, count).
        var counters: [AccountKey: (window: Int64, count: Int)] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    package func admit(_ requests: [AdmissionRequest], nowMilliseconds: Int64, rateWindowMilliseconds: Int64) async throws(LicenseStoreError) -> AdmissionBatch
    {
        let now = ContinuousClock.now
        let window = nowMilliseconds / max(1, rateWindowMilliseconds)
        return state.withLock { state in
            var admissions: [Admission] = []
            var settings: [StoreIdentifier: GuardSettings] = [:]
            for request in requests {
                settings[request.tenant] = state.settings[request.tenant] ?? .off
                let account = AccountKey(tenant: request.tenant, account: request.account)
                if request.mayHaveStoredReply, let stored = state.replies[ReplyKey(account: account, jobID: request.jobID)], stored.lapsesAt > now {
                    admissions.append(.stored(stored.answer))
                    continue
                }
                guard request.countsTowardRate else {
                    admissions.append(.counted(0))
                    continue
                }
                var counter = state.counters[account] ?? (window, 0)
                if counter.window != window { counter = (window, 0) }
                counter.count += 1
                state.counters[account] = counter
                admissions.append(.counted(counter.count))
            }
            return AdmissionBatch(admissions: admissions, settings: settings)
        }
    }

    package func claim(_ claims: [SPCClaim]) async throws(LicenseStoreError) -> [Bool] {
        let now = ContinuousClock.now
        return state.withLock { state in
            claims.map { claim in
                let key = ClaimKey(tenant: claim.tenant, transactionID: claim.transactionID, digest: claim.digest)
                if let seen = state.claims[key], seen.lapsesAt > now { return seen.jobID == claim.jobID }
                state.claims[key] = (claim.jobID, now + .milliseconds(claim.windowMilliseconds))
                return true
            }
        }
    }

    package func storeReplies(_ replies: [StoredReply]) async throws(LicenseStoreError) -> [StoredAnswer?] {
        let now = ContinuousClock.now
        return state.withLock { state in
            replies.map { reply in
                let key = ReplyKey(account: AccountKey(tenant: reply.tenant, account: reply.account), jobID: reply.jobID)
                if let stored = state.replies[key], stored.lapsesAt > now { return stored.answer }
                state.replies[key] = (reply.answer, now + .milliseconds(reply.ttlMilliseconds))
                return nil
            }
        }
    }

    package func putGuardSettings(_ settings: GuardSettings, tenant: StoreIdentifier) async throws(LicenseStoreError) {
        state.withLock { $0.settings[tenant] = settings }
    }
}
