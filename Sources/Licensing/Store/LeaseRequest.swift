/// A request to take or renew one concurrent-stream lease slot.
///
/// A slot is identified by (tenant, account, device, playback session). A request for a slot the
/// account already holds (an SPC with playback state 3, "lease about to expire", or a new key
/// period in the same session) renews it; otherwise a new slot is taken if the account holds fewer
/// than `maxConcurrentStreams` live slots.
public struct LeaseRequest: Sendable, Hashable {
    /// The job's request ID: a redelivered request with the same ID gets the stored result and
    /// never consumes a second slot.
    public var requestID: StoreIdentifier
    public var tenant: StoreIdentifier
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

    public init(
        requestID: StoreIdentifier, tenant: StoreIdentifier, account: StoreIdentifier,
        deviceID: [UInt8], sessionID: UInt64, maxConcurrentStreams: Int,
        leaseDurationSeconds: UInt32, nowMilliseconds: Int64
    ) {
        self.requestID = requestID
        self.tenant = tenant
        self.account = account
        self.deviceID = deviceID
        self.sessionID = sessionID
        self.maxConcurrentStreams = maxConcurrentStreams
        self.leaseDurationSeconds = leaseDurationSeconds
        self.nowMilliseconds = nowMilliseconds
    }

    /// The slot's member name inside the account's slot set: `<device hex>/<session hex, 16 digits>`.
    public var slotMember: String {
        LeaseSlot.member(deviceID: deviceID, sessionID: sessionID)
    }

    /// When a lease granted or renewed by this request ends.
    public var expiresAtMilliseconds: Int64 {
        nowMilliseconds + Int64(leaseDurationSeconds) * 1000
    }
}
