import KSMService
import RedisStore

/// Redis and what sits on it: durability, the cache, rotation prefetch and the guards.
extension ServeConfigurationResolver {
    /// Parsed here, not first at start-up, so `--check-config` names a URL the worker could not use;
    /// the parser's messages name the part that is wrong, never a password's characters.
    mutating func redisURL() -> String? {
        guard let url = string(.redisURL) else { return nil }
        do throws(RedisError) {
            _ = try RedisEndpoint(url: url)
        } catch {
            let location = whereWritten(.redisURL)
            problem(.invalidValue, location, "\(location) cannot be used: \(error.message).")
        }
        return url
    }

    /// Nil (`redis-wait-replicas` 0): Redis's asynchronous replication.
    mutating func redisDurability() -> RedisDurability? {
        let replicas = integer(.redisWaitReplicas) ?? 0
        let timeout = duration(.redisWaitTimeout)
        return replicas > 0 ? RedisDurability(replicas: replicas, timeout: timeout) : nil
    }

    mutating func resolveStore(_ configuration: inout ServeConfiguration) {
        configuration.cacheTTL = duration(.cacheTTL)
        let lead = duration(.rotationLead)
        let interval = duration(.rotationInterval)
        configuration.rotation = lead == .zero ? nil : RotationPrefetchConfiguration(leadTime: lead, interval: interval)
        configuration.prefetchWindow = duration(.prefetchWindow)
        configuration.prefetchMargin = duration(.prefetchMargin)
        // The window is advertised from the prefetcher's schedules: asked for without them, it would
        // silently never appear in a reply.
        if configuration.prefetchWindow > .zero, configuration.rotation == nil || configuration.cacheTTL == .zero,
            let location = sources.source(of: .prefetchWindow)
        {
            let window = ServeSetting.prefetchWindow.written(configuration.prefetchWindow)
            problem(
                .invalidValue, location,
                "prefetch-window \(window) needs rotation prefetch, which is off (rotation-lead 0 or cache-ttl 0): set prefetch-window 0, or turn the cache and rotation-lead on."
            )
        }
        configuration.guardsEnabled = boolean(.guards)
        configuration.replyTTL = duration(.replyTTL)
        configuration.rateWindow = duration(.rateWindow)
    }
}
