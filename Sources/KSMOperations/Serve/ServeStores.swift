import KSMService
import Licensing
import Logging
import RedisStore

/// The license-store stack of a worker process over one Redis client: the Redis store, metered,
/// cached when `cache-ttl` is above zero, and the guards beside it.
struct ServeStores: Sendable {
    let redis: any RedisCommandRunner
    /// The store itself: rotation schedules, provisioning checks and the guards go straight to it.
    let redisStore: RedisLicenseStore
    /// Nil when `cache-ttl` is 0.
    let cache: CachingLicenseStore?
    /// What the processor reads: the cache over the metered store, or the metered store.
    let store: any LicenseStore
    /// Nil with `--no-guards`.
    let guards: JobGuards?

    /// `redis://` for one server, `redis-cluster://` for a Redis Cluster (docs/redis.md).
    init(_ settings: ServeConfiguration, statistics: WorkerStatistics, logger: Logger) throws(ServeRunner.StartError) {
        do {
            redis = try RedisEndpoint(url: settings.redisURL).makeClient(logger: logger)
        } catch {
            throw ServeRunner.StartError(
                "Cannot use the Redis URL \(Redaction.redactedURL(settings.redisURL)): \(error) Check --redis-url or KSM_REDIS_URL.")
        }
        redisStore = RedisLicenseStore(client: redis, durability: settings.redisDurability)
        // Errors are counted below the cache: only real Redis round trips that failed.
        let metered = MeteredLicenseStore(redisStore, statistics: statistics)
        cache = settings.cacheTTL > .zero ? CachingLicenseStore(metered, timeToLive: settings.cacheTTL) : nil
        store = cache ?? metered
        // The guards go straight to Redis (never through the cache): stored replies and counters are
        // per job and per account, the one thing a cache must not answer.
        guards =
            settings.guardsEnabled
            ? JobGuards(
                store: redisStore, replyTTLMilliseconds: ServeConfiguration.milliseconds(settings.replyTTL),
                rateWindowMilliseconds: ServeConfiguration.milliseconds(settings.rateWindow))
            : nil
    }
}
