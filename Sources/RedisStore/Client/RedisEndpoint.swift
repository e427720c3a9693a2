import Logging

/// Which Redis a URL names: one server (`redis://`) or a cluster (`redis-cluster://`), and the
/// client for it. `ksm serve`, `ksm admin` and the benchmarks all go through here, so one setting
/// works everywhere.
package enum RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    case single(RedisClientConfiguration)
    case cluster(RedisClusterConfiguration)

    /// Parses `redis://...` (``RedisClientConfiguration/init(url:)``) or `redis-cluster://...`
    /// (``RedisClusterConfiguration/init(url:)``).
    package init(url: String) throws(RedisError) {
        if url.hasPrefix("redis-cluster://") {
            self = .cluster(try RedisClusterConfiguration(url: url))
        } else {
            self = .single(try RedisClientConfiguration(url: url))
        }
    }

    /// The client: a ``RedisClient`` for one server, a ``RedisClusterClient`` for a cluster.
    /// Validates the configuration; connects nothing yet.
    package func makeClient(logger: Logger = Logger(label: "fairplayksm.redis")) throws(RedisError) -> any RedisCommandRunner {
        switch self {
        case .single(let configuration): try RedisClient(configuration: configuration, logger: logger)
        case .cluster(let configuration): try RedisClusterClient(configuration: configuration, logger: logger)
        }
    }

    /// The URL's parts with the password masked.
    package var description: String {
        switch self {
        case .single(let configuration): configuration.description
        case .cluster(let configuration): configuration.description
        }
    }
}
