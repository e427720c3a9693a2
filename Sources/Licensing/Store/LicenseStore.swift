/// Where a worker reads tenants, wrapped content keys and policies, and takes lease slots.
///
/// Every batch method is one round trip to the backend for the whole batch (a store may take a second
/// one for some requests, as long as the answers are those of the requests applied in order), and
/// answers in request order. Methods throw only for the batch as a whole (backend unreachable, timeout, a corrupt
/// record); check ``LicenseStoreError/isRetriable`` to decide whether to retry the batch.
///
/// Lease semantics, identical in every implementation:
/// - a slot is (tenant, account, device ID, session ID) and is live while `expiresAt > now`;
/// - expired slots are removed before counting;
/// - a request for a live slot renews it (`.renewed`, expiry = max(old, now + duration));
/// - otherwise a slot is taken if fewer than `maxConcurrentStreams` are live (`.granted`), else
///   `.refused(.tooManyStreams, activeCount:, limit:)`;
/// - each request is atomic, and idempotent per request ID for ``leaseIdempotencyWindowMilliseconds``:
///   a replay returns the stored result and changes nothing.
public protocol LicenseStore: Sendable {
    /// Reads tenant, content key and policy for each request, in one round trip.
    func fetch(_ requests: [StoreRequest]) async throws(LicenseStoreError) -> [StoreResult]

    /// Takes, renews or refuses a lease slot for each request, as if applied one by one in request
    /// order, in one round trip (Redis: two when the renewal shortcut declines some).
    func acquireLeases(_ requests: [LeaseRequest]) async throws(LicenseStoreError) -> [LeaseResult]

    /// The account's live slots at `nowMilliseconds`, soonest expiry first: neither expired nor
    /// ended by a newer stream (end-oldest), the ones that count against the stream limit.
    func listSlots(tenant: StoreIdentifier, account: StoreIdentifier, nowMilliseconds: Int64) async throws(LicenseStoreError) -> [LeaseSlot]

    /// Creates or replaces a tenant record (admin), and marks the store provisioned.
    func putTenant(_ tenant: TenantRecord) async throws(LicenseStoreError)

    /// True when the store holds the marker that provisioning (``putTenant(_:)``) writes. False
    /// means the store lost its data (Redis restarted without persistence, or a flush) or was
    /// never provisioned: the worker then answers unknown tenants retriable, not final, and
    /// `/readyz` fails, until an operator provisions it again (docs/redis.md).
    func isProvisioned() async throws(LicenseStoreError) -> Bool

    /// Stores a wrapped content key for an asset and key period (admin). The key must already be
    /// wrapped by the caller; see ``WrappedContentKey``.
    func putContentKey(_ key: WrappedContentKey, tenant: StoreIdentifier, assetID: [UInt8], keyPeriod: StoreIdentifier?) async throws(LicenseStoreError)

    /// Stores a policy document (raw JSON bytes) for one asset, or the tenant's default when
    /// `assetID` is nil (admin).
    func putPolicy(_ document: [UInt8], tenant: StoreIdentifier, assetID: [UInt8]?) async throws(LicenseStoreError)
}

/// How long a lease request's result is kept for replays: 24 hours.
public let leaseIdempotencyWindowMilliseconds: Int64 = 24 * 60 * 60 * 1000
