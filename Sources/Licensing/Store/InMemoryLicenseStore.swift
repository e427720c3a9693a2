import Synchronization

/// A ``LicenseStore`` in process memory, for the demo and tests; same semantics as the Redis store.
///
/// `Sendable` because all state sits behind one `Mutex`; every call holds it briefly and never
/// suspends while holding it, so a batch is as atomic as a Redis script per request.
public final class InMemoryLicenseStore: LicenseStore {
    private struct AccountKey: Hashable {
        var tenant: StoreIdentifier
        var account: StoreIdentifier
    }

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

    private struct State {
        var tenants: [StoreIdentifier: TenantRecord] = [:]
        var contentKeys: [ContentKeyKey: WrappedContentKey] = [:]
        var policies: [PolicyKey: [UInt8]] = [:]
        /// Per account: slot member -> expiry (ms).
        var slots: [AccountKey: [String: Int64]] = [:]
        /// Stored results and when they lapse (ms, on the requests' clock).
        var replays: [ReplayKey: (result: LeaseResult, lapsesAt: Int64)] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    public func fetch(_ requests: [StoreRequest]) async throws(LicenseStoreError) -> [StoreResult] {
        state.withLock { state in
            requests.map { request in
                let key = ContentKeyKey(tenant: request.tenant, assetID: request.assetID, keyPeriod: request.keyPeriod)
                let policy =
                    state.policies[PolicyKey(tenant: request.tenant, assetID: request.assetID)]
                    ?? state.policies[PolicyKey(tenant: request.tenant, assetID: nil)]
                return StoreResult(tenant: state.tenants[request.tenant], contentKey: state.contentKeys[key], policy: policy)
            }
        }
    }

    public func acquireLeases(_ requests: [LeaseRequest]) async throws(LicenseStoreError) -> [LeaseResult] {
        state.withLock { state in
            requests.map { Self.acquire($0, in: &state) }
        }
    }

    private static func acquire(_ request: LeaseRequest, in state: inout State) -> LeaseResult {
        let now = request.nowMilliseconds
        let account = AccountKey(tenant: request.tenant, account: request.account)
        let replayKey = ReplayKey(account: account, requestID: request.requestID)
        if let stored = state.replays[replayKey], stored.lapsesAt > now {
            return stored.result
        }
        var slots = state.slots[account, default: [:]].filter { $0.value > now }
        let member = request.slotMember
        let result: LeaseResult
        if let current = slots[member] {
            let expiry = max(current, request.expiresAtMilliseconds)
            slots[member] = expiry
            result = .renewed(expiresAtMilliseconds: expiry)
        } else if slots.count < request.maxConcurrentStreams {
            slots[member] = request.expiresAtMilliseconds
            result = .granted(expiresAtMilliseconds: request.expiresAtMilliseconds)
        } else {
            result = .refused(reason: .tooManyStreams, activeCount: slots.count, limit: request.maxConcurrentStreams)
        }
        state.slots[account] = slots.isEmpty ? nil : slots
        if state.replays.count >= 4096, state.replays.count.isMultiple(of: 1024) {
            // Amortised pruning; a lapsed record left behind is ignored by the check above.
            state.replays = state.replays.filter { $0.value.lapsesAt > now }
        }
        state.replays[replayKey] = (result, now + leaseIdempotencyWindowMilliseconds)
        return result
    }

    public func listSlots(tenant: StoreIdentifier, account: StoreIdentifier, nowMilliseconds: Int64) async throws(LicenseStoreError) -> [LeaseSlot] {
        let slots = state.withLock { $0.slots[AccountKey(tenant: tenant, account: account)] ?? [:] }
        return slots.compactMap { member, expiry in
            expiry > nowMilliseconds ? LeaseSlot(member: member, expiresAtMilliseconds: expiry) : nil
        }.sorted { ($0.expiresAtMilliseconds, LeaseSlot.member(deviceID: $0.deviceID, sessionID: $0.sessionID)) < ($1.expiresAtMilliseconds, LeaseSlot.member(deviceID: $1.deviceID, sessionID: $1.sessionID)) }
    }

    public func putTenant(_ tenant: TenantRecord) async throws(LicenseStoreError) {
        state.withLock { $0.tenants[tenant.id] = tenant }
    }

    public func putContentKey(_ key: WrappedContentKey, tenant: StoreIdentifier, assetID: [UInt8], keyPeriod: StoreIdentifier?) async throws(LicenseStoreError) {
        state.withLock { $0.contentKeys[ContentKeyKey(tenant: tenant, assetID: assetID, keyPeriod: keyPeriod)] = key }
    }

    public func putPolicy(_ document: [UInt8], tenant: StoreIdentifier, assetID: [UInt8]?) async throws(LicenseStoreError) {
        state.withLock { $0.policies[PolicyKey(tenant: tenant, assetID: assetID)] = document }
    }
}
