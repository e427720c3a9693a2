/// What the store knows about one tenant (a content provider using this key server).
public struct TenantRecord: Sendable, Hashable {
    /// The tenant's identifier.
    public var id: StoreIdentifier
    /// Hashes (SHA-256 in practice; the store treats them as opaque bytes) of the FairPlay
    /// certificates this tenant owns. A worker refuses an SPC made for a certificate not listed here.
    public var certificateHashes: [[UInt8]]
    /// Names the key-encryption key (held by workers, never by the store) that wraps this tenant's
    /// content keys and entitlement secrets.
    public var keyEncryptionKeyID: StoreIdentifier
    /// The account's stream limit when the policy leases keys and no policy layer sets
    /// `max-streams` (the record's default under the documents). Default: 2.
    public var maxConcurrentStreams: Int
    /// Kept for records written before the policy engine; the lease length now comes from the
    /// policy's `lease.duration`, and the worker does not read this. Default: 600.
    public var leaseDurationSeconds: UInt32
    /// The entitlement token secrets by key ID (`kid`), each wrapped (RFC 3394) under
    /// ``keyEncryptionKeyID`` like content keys, so Redis and its backups never hold a usable secret.
    /// Whether a token is required is the policy's `entitlement-required`, not this record's.
    public var entitlementSecrets: [StoreIdentifier: [UInt8]]
    /// The tenant's content key seed, wrapped (RFC 3394) under ``keyEncryptionKeyID``; nil when the
    /// tenant has none. With a seed, an asset with no stored key gets the key derived from the seed
    /// and its asset ID (docs/key-seeds.md), so a packager and every worker agree without a key
    /// per period in the store.
    public var keySeed: [UInt8]?

    /// Creates a tenant record; only `id` and `keyEncryptionKeyID` have no default (defaults as on
    /// each property).
    public init(
        id: StoreIdentifier,
        certificateHashes: [[UInt8]] = [],
        keyEncryptionKeyID: StoreIdentifier,
        maxConcurrentStreams: Int = 2,
        leaseDurationSeconds: UInt32 = 600,
        entitlementSecrets: [StoreIdentifier: [UInt8]] = [:],
        keySeed: [UInt8]? = nil
    ) {
        self.id = id
        self.certificateHashes = certificateHashes
        self.keyEncryptionKeyID = keyEncryptionKeyID
        self.maxConcurrentStreams = maxConcurrentStreams
        self.leaseDurationSeconds = leaseDurationSeconds
        self.entitlementSecrets = entitlementSecrets
        self.keySeed = keySeed
    }
}
