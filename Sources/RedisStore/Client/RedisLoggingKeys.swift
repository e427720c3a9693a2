/// Logger metadata keys of this module, in one place. Values never contain command arguments,
/// passwords or key material.
enum RedisLoggingKeys {
    /// The pool index of a connection.
    static let connection = "redis.connection"
    /// A `RedisError`'s description.
    static let error = "redis.error"
    /// The backoff before the next connect attempt.
    static let retryIn = "redis.retry_in"
    /// Consecutive failed connects before a success.
    static let failedConnects = "redis.failed_connects"
    /// How many script calls fell back to EVAL.
    static let count = "redis.count"
    /// A cluster node's `host:port`.
    static let node = "redis.node"
}
