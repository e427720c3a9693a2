import KSMService

extension ServeSetting {
    package static let redisURL = ServeSetting(
        "redis-url", env: "KSM_REDIS_URL", .string(default: nil), secret: true, required: true, example: "redis://ksm:password@redis:6379/0",
        help:
            "redis://[user:pass@]host:port/db, or redis-cluster://[user:pass@]host:port,host:port for a Redis Cluster; user and password percent-encoded."
    )
    package static let redisWaitReplicas = ServeSetting(
        "redis-wait-replicas", env: "KSM_REDIS_WAIT_REPLICAS", .integer(0...16, default: 0),
        help: "Replicas that must acknowledge each lease batch (Redis WAIT) before it is answered; 0: asynchronous replication.")
    package static let redisWaitTimeout = ServeSetting(
        "redis-wait-timeout-ms", env: "KSM_REDIS_WAIT_TIMEOUT_MS", .duration(.milliseconds(1...10_000), default: .milliseconds(100)),
        help: "How long a lease batch waits for those replicas; fewer by then answer storeUnavailable.")
    package static let cacheTTL = ServeSetting(
        "cache-ttl", env: "KSM_CACHE_TTL", .duration(.seconds(0, included: true, maximumSeconds), default: .seconds(2)),
        help: "Seconds a worker caches tenants, wrapped keys and policies (single-flight); 0 turns the cache off.")
    package static let guards = ServeSetting(
        "guards", flag: .setsFalse("no-guards"), env: "KSM_GUARDS", .boolean(default: true),
        help: "Turn off stored replies, rate limits and anti-replay (one Redis round trip less per batch, redelivered jobs get fresh CKCs).")
    package static let replyTTL = ServeSetting(
        "reply-ttl", env: "KSM_REPLY_TTL", .duration(.seconds(0, 30 * maximumSeconds), default: .seconds(900)),
        help: "Seconds a reply is kept in Redis so a redelivered job gets the same bytes.")
    package static let rateWindow = ServeSetting(
        "rate-window-ms", env: "KSM_RATE_WINDOW_MS", .duration(.milliseconds(1...86_400_000), default: .milliseconds(1_000)),
        help: "Milliseconds of one rate window; tenants' rate-limit counts jobs per account per window.")
}
