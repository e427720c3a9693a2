import Licensing

/// The worker's guards against repeated and hostile input (docs/hostile-input.md): where they keep
/// their state, and the deployment-wide settings. Per-tenant limits live in the store
/// (``GuardSettings``).
public struct JobGuards: Sendable {
    /// Stored replies, rate counters, SPC claims.
    package var store: any JobGuardStore
    /// How long a reply is kept for redeliveries. Long enough to cover a worker's death, the group's
    /// session timeout and a rebalance, with margin; not the lease's 24 h. Default: 15 minutes.
    public var replyTTLMilliseconds: Int64
    /// The length of a rate window; each tenant's `rate-limit` counts jobs per account per window.
    /// Default: 1 s.
    public var rateWindowMilliseconds: Int64
    /// Which tenants set no rate limit, as the last batches read it (shared by copies).
    package let settingsCache: GuardSettingsCache

    /// - Parameters:
    ///   - replyTTLMilliseconds: how long a job's answer is kept for a replay of the same job ID.
    ///   - rateWindowMilliseconds: the window of the tenants' and accounts' request-rate limits.
    public init(store: any JobGuardStore, replyTTLMilliseconds: Int64 = 15 * 60 * 1000, rateWindowMilliseconds: Int64 = 1000) {
        self.init(store: store, replyTTLMilliseconds: replyTTLMilliseconds, rateWindowMilliseconds: rateWindowMilliseconds, settingsCache: GuardSettingsCache())
    }

    /// With a settings cache shared by several guards (and tests that read it).
    package init(
        store: any JobGuardStore, replyTTLMilliseconds: Int64 = 15 * 60 * 1000, rateWindowMilliseconds: Int64 = 1000, settingsCache: GuardSettingsCache
    ) {
        self.store = store
        self.settingsCache = settingsCache
        self.replyTTLMilliseconds = replyTTLMilliseconds
        self.rateWindowMilliseconds = rateWindowMilliseconds
    }
}
