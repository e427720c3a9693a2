import Licensing
import Synchronization

/// The tenants' guard settings as the last admission round trip read them, so the next batch knows
/// which tenants set no rate limit: their jobs skip the rate counter (a plain `GET` of the stored
/// reply instead of a Lua script per job). Settings older than ``timeToLive`` count as unknown, so a
/// rate limit an operator sets applies within that time (and one batch).
package final class GuardSettingsCache: Sendable {
    package let timeToLive: Duration
    private let entries = Mutex<[StoreIdentifier: (settings: GuardSettings, readAt: ContinuousClock.Instant)]>([:])

    package init(timeToLive: Duration = .seconds(2)) {
        self.timeToLive = timeToLive
    }

    /// False only when the tenant's settings are known, fresh and set no rate limit.
    package func mayRateLimit(_ tenant: StoreIdentifier, now: ContinuousClock.Instant = .now) -> Bool {
        entries.withLock { entries in
            guard let entry = entries[tenant], now - entry.readAt < timeToLive else { return true }
            return entry.settings.rateLimit != nil
        }
    }

    /// Keeps what an admission round trip read (every tenant of its batch).
    package func remember(_ settings: [StoreIdentifier: GuardSettings], now: ContinuousClock.Instant = .now) {
        entries.withLock { entries in
            for (tenant, value) in settings { entries[tenant] = (value, now) }
        }
    }
}
