import Synchronization

/// A ``LicenseStore`` in process memory, for the demo and tests; same semantics as the Redis store.
///
/// `Sendable` because all state sits behind one `Mutex`; every call holds it briefly and never
/// suspends while holding it, so a batch is as atomic as a Redis script per request.
package final class InMemoryLicenseStore: LicenseStore {
    private struct ContentKeyKey: Hashable {
        var tenant: StoreIdentifier
        var assetID: [UInt8]
        var keyPeriod: StoreIdentifier?
    }

    private struct PolicyKey: Hashable {
        var tenant: StoreIdentifier
        var assetID: [UInt8]?
    }

    private struct ReplayKey: Hashable {
        var account: AccountKey
        var requestID: StoreIdentifier
    }

    /// One lease slot: expiry, first start (for end-oldest), and whether a newer stream ended it.
    private struct Slot {
        var expiresAt: Int64
        var startedAt: Int64
        var ended = false
    }

    /// An account's mutable records besides its slots.
    private struct AccountRecords {
        var devices: Set<[UInt8]> = []
        /// Asset ID -> rental start (ms).
        var rentals: [[UInt8]: Int64] = [:]
        /// Stream ID -> record.
        var offline: [[UInt8]: OfflineLicenseRecord] = [:]
        var invalidated: Set<[UInt8]> = []
    }

    private struct State {
        var tenants: [StoreIdentifier: TenantRecord] = [:]
        var contentKeys: [ContentKeyKey: WrappedContentKey] = [:]
        var policies: [PolicyKey: [UInt8]] = [:]
        /// Per account: slot member -> slot.
        var slots: [AccountKey: [String: Slot]] = [:]
        var accounts: [AccountKey: AccountRecords] = [:]
        /// Stored results and when they lapse (ms, on the requests' clock).
        var replays: [ReplayKey: (result: LeaseResult, lapsesAt: Int64)] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    package func fetch(_ requests: [StoreRequest]) async throws(LicenseStoreError) -> [StoreResult] {
        state.withLock { state in
            requests.map { request in
                let key = ContentKeyKey(tenant: request.tenant, assetID: request.assetID, keyPeriod: request.keyPeriod)
                var result = StoreResult(
                    tenant: state.tenants[request.tenant], contentKey: state.contentKeys[key],
                    tenantPolicy: state.policies[PolicyKey(tenant: request.tenant, assetID: nil)],
                    assetPolicy: state.policies[PolicyKey(tenant: request.tenant, assetID: request.assetID)])
                let records = state.accounts[AccountKey(tenant: request.tenant, account: request.account)]
                if request.accountReads.contains(.rentalStart) {
                    result.rentalStartRead = true
                    result.rentalStartedAt = records?.rentals[request.assetID]
                }
                if request.accountReads.contains(.offlineRecords) {
                    result.offlineRecords = (records?.offline.values).map { $0.sorted { $0.streamID.lexicographicallyPrecedes($1.streamID) } } ?? []
                }
                return result
            }
        }
    }

    package func acquireLeases(_ requests: [LeaseRequest]) async throws(LicenseStoreError) -> [LeaseResult] {
        state.withLock { state in
            requests.map { Self.acquire($0, in: &state) }
        }
    }

    private static func acquire(_ request: LeaseRequest, in state: inout State) -> LeaseResult {
        let now = request.nowMilliseconds
        let account = request.accountKey
        let replayKey = ReplayKey(account: account, requestID: request.requestID)
        if let stored = state.replays[replayKey], stored.lapsesAt > now {
            return stored.result
        }
        var slots = state.slots[account, default: [:]].filter { $0.value.expiresAt > now }
        var records = state.accounts[account, default: AccountRecords()]
        let result = Self.decide(request, slots: &slots, records: records)
        if case .refused = result {
        } else {
            if request.deviceLimit != nil { records.devices.insert(request.deviceID) }
            if let asset = request.rentalAssetID, records.rentals[asset] == nil { records.rentals[asset] = now }
            for record in request.offlineRecords { records.offline[record.streamID] = record }
            records.invalidated.formUnion(request.invalidatedStreamIDs)
            state.accounts[account] = records
        }
        state.slots[account] = slots.isEmpty ? nil : slots
        if state.replays.count >= 4096, state.replays.count.isMultiple(of: 1024) {
            // Amortised pruning; a lapsed record left behind is ignored by the check above.
            state.replays = state.replays.filter { $0.value.lapsesAt > now }
        }
        state.replays[replayKey] = (result, now + leaseIdempotencyWindowMilliseconds)
        return result
    }

    /// The device check, then the slot, as the Redis script does them.
    private static func decide(_ request: LeaseRequest, slots: inout [String: Slot], records: AccountRecords) -> LeaseResult {
        let now = request.nowMilliseconds
        if let limit = request.deviceLimit, !records.devices.contains(request.deviceID), records.devices.count >= limit {
            return .refused(reason: .deviceLimitReached, activeCount: records.devices.count, limit: limit)
        }
        let member = request.slotMember
        let live = slots.values.filter { !$0.ended }.count
        switch request.slot {
        case .none:
            return .recorded
        case .hold:
            guard let mine = slots[member] else { return .refused(reason: .noLiveSlot, activeCount: live, limit: request.maxConcurrentStreams) }
            if mine.ended { return .refused(reason: .streamEnded, activeCount: live, limit: request.maxConcurrentStreams) }
            return .held(expiresAtMilliseconds: mine.expiresAt)
        case .acquireOrRenew:
            if var mine = slots[member] {
                if mine.ended { return .refused(reason: .streamEnded, activeCount: live, limit: request.maxConcurrentStreams) }
                mine.expiresAt = max(mine.expiresAt, request.expiresAtMilliseconds)
                slots[member] = mine
                return .renewed(expiresAtMilliseconds: mine.expiresAt)
            }
            if live < request.maxConcurrentStreams {
                // An account's first slot counts as started at 0, as the Redis script records no
                // start for it: on a tie with a stream started the same millisecond, it is ended first.
                slots[member] = Slot(expiresAt: request.expiresAtMilliseconds, startedAt: slots.isEmpty ? 0 : now)
                return .granted(expiresAtMilliseconds: request.expiresAtMilliseconds)
            }
            guard request.endOldestWhenFull,
                let oldest = slots.filter({ !$0.value.ended }).min(by: {
                    ($0.value.startedAt, $0.value.expiresAt, $0.key) < ($1.value.startedAt, $1.value.expiresAt, $1.key)
                })
            else {
                return .refused(reason: .tooManyStreams, activeCount: live, limit: request.maxConcurrentStreams)
            }
            slots[oldest.key]?.ended = true
            slots[member] = Slot(expiresAt: request.expiresAtMilliseconds, startedAt: now)
            return .grantedEndingOldest(expiresAtMilliseconds: request.expiresAtMilliseconds, ended: oldest.key)
        }
    }

    /// The account's registered devices and invalidated stream IDs (tests and admin).
    package func accountRecords(tenant: StoreIdentifier, account: StoreIdentifier) -> (devices: Set<[UInt8]>, invalidated: Set<[UInt8]>) {
        state.withLock { state in
            let r = state.accounts[AccountKey(tenant: tenant, account: account)]
            return (r?.devices ?? [], r?.invalidated ?? [])
        }
    }

    package func listSlots(tenant: StoreIdentifier, account: StoreIdentifier, nowMilliseconds: Int64) async throws(LicenseStoreError) -> [LeaseSlot] {
        let slots = state.withLock { $0.slots[AccountKey(tenant: tenant, account: account)] ?? [:] }
        return slots.compactMap { member, slot in
            slot.expiresAt > nowMilliseconds && !slot.ended ? LeaseSlot(member: member, expiresAtMilliseconds: slot.expiresAt) : nil
        }.sorted {
            ($0.expiresAtMilliseconds, LeaseSlot.member(deviceID: $0.deviceID, sessionID: $0.sessionID)) < (
                $1.expiresAtMilliseconds, LeaseSlot.member(deviceID: $1.deviceID, sessionID: $1.sessionID)
            )
        }
    }

    package func putTenant(_ tenant: TenantRecord) async throws(LicenseStoreError) {
        state.withLock { $0.tenants[tenant.id] = tenant }
    }

    /// Memory is provisioned once it holds a tenant: it cannot lose data and stay up.
    package func isProvisioned() async throws(LicenseStoreError) -> Bool {
        state.withLock { !$0.tenants.isEmpty }
    }

    package func putContentKey(_ key: WrappedContentKey, tenant: StoreIdentifier, assetID: [UInt8], keyPeriod: StoreIdentifier?) async throws(LicenseStoreError)
    {
        state.withLock { $0.contentKeys[ContentKeyKey(tenant: tenant, assetID: assetID, keyPeriod: keyPeriod)] = key }
    }

    package func putPolicy(_ document: [UInt8], tenant: StoreIdentifier, assetID: [UInt8]?) async throws(LicenseStoreError) {
        state.withLock { $0.policies[PolicyKey(tenant: tenant, assetID: assetID)] = document }
    }
}
