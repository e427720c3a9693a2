/// What a SPEKE key provider writes beside the records workers read: content keys and asset
/// policies stored only if absent, and the short per-track log of key periods its rotation
/// schedules are written from (docs/key-seeds.md, "Keys for packagers (SPEKE)").
///
/// Refines ``LicenseStore`` (the provider reads tenants and stored keys with ``LicenseStore/fetch(_:)``,
/// exactly as a worker does) and ``RotationScheduleStore`` (it writes schedules as
/// `ksm admin put-rotation` does). ``RedisLicenseStore`` implements it.
package protocol PackagerKeyStore: LicenseStore, RotationScheduleStore {
    /// Applies each claim atomically, in one round trip for the batch: stores the candidate key
    /// under (tenant, asset ID, no key period) unless a key is stored there, and the policy as the
    /// asset's unless it has one. Returns, per claim and in order, the key stored afterwards: the
    /// one that was there, the candidate, or nil when the claim carried no candidate and none is
    /// stored. Two callers racing on one asset get the same answer.
    func claimContentKeys(_ claims: [ContentKeyClaim]) async throws(LicenseStoreError) -> [WrappedContentKey?]

    /// Adds `entry` to the period log of (tenant, content ID, track type), replacing an entry of
    /// the same ``PackagerPeriodEntry/order``, keeps the newest ``periodLogLength`` entries, and
    /// returns whether the log changed and the log after the write, oldest first.
    func recordPeriod(_ entry: PackagerPeriodEntry, tenant: StoreIdentifier, contentID: [UInt8], trackType: [UInt8]) async throws(LicenseStoreError) -> (
        changed: Bool, log: [PackagerPeriodEntry]
    )
}

/// Entries a period log keeps: enough for a packager that asks a few periods ahead, and bounded,
/// so a stream that runs for months keeps a log of a few hundred bytes.
package let periodLogLength = 8

/// How long a period log outlives its last write: 7 days, so a stream that stopped leaves the store.
package let periodLogRetentionMilliseconds: Int64 = 7 * 86_400_000
