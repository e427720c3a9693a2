/// What the store knows about one tenant (a content provider using this key server).
public struct TenantRecord: Sendable, Hashable {
    /// The tenant's identifier.
    public var id: StoreIdentifier
    /// Hashes (SHA-256 in practice; the store treats them as opaque bytes) of the FairPlay
    /// certificates this tenant owns. A worker refuses an SPC made for a certificate not listed here.
    public var certificateHashes: [[UInt8]]
    /// Names the key-encryption key (held by workers, never by the store) that wraps this tenant's
    /// content keys.
    public var keyEncryptionKeyID: StoreIdentifier
    /// The most leases one account may hold at a time. Default: 2.
    public var maxConcurrentStreams: Int
    /// How long a granted or renewed lease lasts, in seconds (the CKC's lease-duration TLLV).
    /// Default: 600.
    public var leaseDurationSeconds: UInt32

    public init(
        id: StoreIdentifier,
        certificateHashes: [[UInt8]] = [],
        keyEncryptionKeyID: StoreIdentifier,
        maxConcurrentStreams: Int = 2,
        leaseDurationSeconds: UInt32 = 600
    ) {
        self.id = id
        self.certificateHashes = certificateHashes
        self.keyEncryptionKeyID = keyEncryptionKeyID
        self.maxConcurrentStreams = maxConcurrentStreams
        self.leaseDurationSeconds = leaseDurationSeconds
    }
}
