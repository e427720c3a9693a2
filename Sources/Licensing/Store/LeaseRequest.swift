/// A request to take or renew one concurrent-stream lease slot, and to record the license's other
/// per-account side effects (device registration, rental start, offline records) in the same atomic
/// step: the store applies all of it or, when the device limit or the slot refuses, none of it.
///
/// A slot is identified by (tenant, account, device, playback session). A request for a slot the
/// account already holds (an SPC with playback state 3, "lease about to expire", or a new key
/// period in the same session) renews it; otherwise a new slot is taken if the account holds fewer
/// than `maxConcurrentStreams` live slots.
public struct LeaseRequest: Sendable, Hashable {
    /// The job's request ID: a redelivered request with the same ID gets the stored result and
    /// never consumes a second slot.
    public var requestID: StoreIdentifier
    /// The tenant whose policy and limits apply.
    public var tenant: StoreIdentifier
    /// The account (a subscriber of the tenant) whose slots, devices and rentals are counted.
    public var account: StoreIdentifier
    /// The device's hashed unique ID (HU) from the SPC, as bytes; stored as lower-case hex.
    public var deviceID: [UInt8]
    /// The playback session ID from the SPC's media playback state TLLV.
    public var sessionID: UInt64
    /// The account's limit, from ``TenantRecord/maxConcurrentStreams`` (the worker passes it in:
    /// tenant data and slots live in different Redis Cluster hash slots).
    public var maxConcurrentStreams: Int
    /// The lease length, from ``TenantRecord/leaseDurationSeconds``.
    public var leaseDurationSeconds: UInt32
    /// The worker's clock, in milliseconds since 1970. A slot is live while `expiresAt > now`.
    public var nowMilliseconds: Int64
    /// What to do with the slot. Default: ``SlotMode/acquireOrRenew``.
    public var slot: SlotMode
    /// When the account is full: false refuses the new stream; true admits it and marks the oldest
    /// live stream ended, so its next renewal is refused (policy `when-full: end-oldest`).
    public var endOldestWhenFull: Bool
    /// The account's device limit: the device is registered (or already is) before anything else;
    /// a new device beyond the limit refuses the request. Nil: no device registry.
    public var deviceLimit: Int?
    /// Records `now` as the account's rental start for this asset unless one is recorded already.
    public var rentalAssetID: [UInt8]?
    /// Offline license records to write (a new dual-expiry license, or records a sync SPC changed).
    package var offlineRecords: [OfflineLicenseRecord]
    /// Stream IDs a sync SPC invalidated, kept so they never count as live again.
    public var invalidatedStreamIDs: [[UInt8]]

    /// The asset the session plays, so the store can count its live viewers for the expected
    /// rotation load (``RotationScheduleStore/viewerCounts(_:nowMilliseconds:)``). Nil: not counted.
    public var viewedAssetID: [UInt8]? = nil

    /// The session says it already holds a slot (playback state 3, or 2 under a renewing policy):
    /// a hint that lets a store try a cheaper renewal first. Results never depend on it: the Redis
    /// store uses it only for an account alone in its batch, so no request runs out of order.
    public var expectsLiveSlot = false

    /// What a request does with the account's lease slot.
    public enum SlotMode: Sendable, Hashable {
        /// No slot (no lease); only the other side effects.
        case none
        /// Take a slot, or renew this session's live slot (playback states 1 and 3).
        case acquireOrRenew
        /// The session must hold a live slot; nothing is extended (state 2 without renewal).
        case hold
    }

    package init(
        requestID: StoreIdentifier, tenant: StoreIdentifier, account: StoreIdentifier,
        deviceID: [UInt8], sessionID: UInt64, maxConcurrentStreams: Int,
        leaseDurationSeconds: UInt32, nowMilliseconds: Int64, slot: SlotMode = .acquireOrRenew,
        endOldestWhenFull: Bool = false, deviceLimit: Int? = nil, rentalAssetID: [UInt8]? = nil,
        offlineRecords: [OfflineLicenseRecord] = [], invalidatedStreamIDs: [[UInt8]] = []
    ) {
        self.requestID = requestID
        self.tenant = tenant
        self.account = account
        self.deviceID = deviceID
        self.sessionID = sessionID
        self.maxConcurrentStreams = maxConcurrentStreams
        self.leaseDurationSeconds = leaseDurationSeconds
        self.nowMilliseconds = nowMilliseconds
        self.slot = slot
        self.endOldestWhenFull = endOldestWhenFull
        self.deviceLimit = deviceLimit
        self.rentalAssetID = rentalAssetID
        self.offlineRecords = offlineRecords
        self.invalidatedStreamIDs = invalidatedStreamIDs
    }

    /// The account whose slots and records this request writes.
    package var accountKey: AccountKey { AccountKey(tenant: tenant, account: account) }

    /// The slot's member name inside the account's slot set: `<device hex>/<session hex, 16 digits>`.
    public var slotMember: String {
        LeaseSlot.member(deviceID: deviceID, sessionID: sessionID)
    }

    /// When a lease granted or renewed by this request ends.
    public var expiresAtMilliseconds: Int64 {
        nowMilliseconds + Int64(leaseDurationSeconds) * 1000
    }
}
