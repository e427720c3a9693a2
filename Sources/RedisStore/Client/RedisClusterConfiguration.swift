/// How a ``RedisClusterClient`` finds and talks to a Redis Cluster. Plain values with documented
/// defaults; validated by ``RedisClusterClient/init(configuration:logger:)``.
package struct RedisClusterConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// Nodes asked for the slot map until one answers; any node of the cluster will do.
    package var seeds: [RedisNodeAddress]
    /// AUTH, timeouts, pool size and reconnect backoff of every node's pool (its host and port are
    /// replaced by the node's). The database must be 0: a cluster has no other.
    package var node: RedisClientConfiguration
    /// Redirects (`MOVED`, `ASK`) followed for one pipeline before it fails. Default: 5.
    package var maximumRedirects: Int = 5
    /// Rounds of `TRYAGAIN`, `CLUSTERDOWN` or an unreachable master retried for one pipeline,
    /// with ``retryBackoff`` between them, before it fails with `.clusterUnavailable`. Default: 6
    /// (with the default backoff, about 3 s: longer than a failover with a 1 s node timeout).
    package var maximumRetries: Int = 6
    /// The wait before each retry round. Default: base 50 ms, cap 1 s.
    package var retryBackoff: RedisClientConfiguration.Backoff = .init(base: .milliseconds(50), cap: .seconds(1))

    package init(seeds: [RedisNodeAddress], node: RedisClientConfiguration = RedisClientConfiguration()) {
        self.seeds = seeds
        self.node = node
    }

    /// Parses `redis-cluster://[[user]:password@]host:port[,host:port...]`, the same user and
    /// password syntax as `redis://` (percent-encoded, RFC 3986) (``RedisClientConfiguration/init(url:)``); a path may only be
    /// `/0`. Other fields keep their defaults.
    package init(url: String) throws(RedisError) {
        let scheme = "redis-cluster://"
        guard url.hasPrefix(scheme) else {
            throw RedisError(.invalidConfiguration, "Redis Cluster URL: must start with \(scheme)", isRetriable: false)
        }
        // User info first, up to the last `@`, as for redis:// (``RedisURLUserInfo``).
        let (userInfo, rest) = try RedisURLUserInfo.split(url.dropFirst(scheme.count), url: "Redis Cluster URL")
        if rest.contains(where: { $0 == "?" || $0 == "#" }) {
            throw RedisError(.invalidConfiguration, "Redis Cluster URL: query parameters and fragments are not supported", isRetriable: false)
        }
        let pathStart = rest.firstIndex(of: "/") ?? rest.endIndex
        let path = rest[pathStart...]
        let hosts = rest[..<pathStart]
        // Each seed parsed as a redis:// URL with the shared path, then given the shared credentials.
        var parsed: [RedisClientConfiguration] = []
        for host in hosts.split(separator: ",", omittingEmptySubsequences: false) {
            guard !host.isEmpty else {
                throw RedisError(.invalidConfiguration, "Redis Cluster URL: empty seed in the host list", isRetriable: false)
            }
            var seed = try RedisClientConfiguration(url: "redis://\(host)\(path)")
            seed.username = userInfo.username
            seed.password = userInfo.password
            parsed.append(seed)
        }
        guard let first = parsed.first else {
            throw RedisError(.invalidConfiguration, "Redis Cluster URL: no seed", isRetriable: false)
        }
        guard first.database == 0 else {
            throw RedisError(.invalidConfiguration, "Redis Cluster URL: a cluster has database 0 only", isRetriable: false)
        }
        self.init(seeds: parsed.map { RedisNodeAddress(host: $0.host, port: $0.port) }, node: first)
    }

    /// Seeds, user and pool; the password is shown only as `***`.
    package var description: String {
        var text = "redis-cluster://"
        if node.username != nil || node.password != nil {
            text += "\(node.username ?? ""):\(node.password == nil ? "" : "***")@"
        }
        text += seeds.map(\.description).joined(separator: ",")
        text += " pool=\(node.poolSize)"
        return text
    }
}
