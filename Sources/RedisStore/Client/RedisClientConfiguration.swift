/// How a ``RedisClient`` connects. Plain values with documented defaults; validated by
/// ``RedisClient/init(configuration:logger:)``.
public struct RedisClientConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// Host name or IP address. Default: `127.0.0.1`.
    public var host: String = "127.0.0.1"
    /// TCP port. Default: 6379.
    public var port: Int = 6379
    /// ACL user name for `AUTH user password`; nil sends `AUTH password` (the `default` user).
    /// Default: nil.
    public var username: String?
    /// Password; nil sends no `AUTH`. Never logged or printed. Default: nil.
    public var password: String?
    /// Database selected with `SELECT` on every (re)connect when not 0. Default: 0.
    public var database: Int = 0
    /// Time allowed to open a TCP connection. Default: 1 s.
    public var connectTimeout: Duration = .seconds(1)
    /// Time allowed for each reply (socket read/write timeout); a timeout drops the connection.
    /// Zero disables it. Default: 1 s.
    public var commandTimeout: Duration = .seconds(1)
    /// Connections in the pool, each on its own serial queue. Default: 2.
    public var poolSize: Int = 2
    /// Reconnect backoff after failed connects. Default: base 50 ms, cap 1 s.
    public var reconnectBackoff: Backoff = Backoff()
    /// The longest average round trip a caller on a thread that may block (the crypto threads) waits
    /// out in place rather than through the connection's queue. The queue's path costs two thread
    /// wake-ups, tens of microseconds of CPU on a busy host; a longer wait in place would hold a
    /// crypto thread that other batches' RSA needs for longer than the wake-ups it saves. A server
    /// on the same host answers within it; one across a network, or one too busy to answer at once,
    /// does not. Default: 100 µs.
    package var inPlaceRoundTripLimit: Duration = .microseconds(100)

    /// Capped exponential backoff with jitter: after the n-th consecutive failed connect a
    /// connection waits a random time in `[d/2, d]`, `d = min(cap, base * 2^(n-1))`, before trying
    /// again. The first reconnect after a connection is lost is attempted at once.
    public struct Backoff: Sendable, Hashable {
        /// Default: 50 ms.
        public var base: Duration
        /// Default: 1 s. The wait a connection may still have to serve when the store is back, so it
        /// bounds how long a worker keeps answering `storeUnavailable` after an outage; a cap of
        /// several seconds leaves a worker whose connections are in their longest waits refusing
        /// its backlog for that long. One connect a second per connection is nothing to a Redis,
        /// and a connect to an unreachable host is bounded by `connectTimeout`.
        public var cap: Duration

        /// Creates a backoff; `base` is the first wait, doubled per failure up to `cap`.
        public init(base: Duration = .milliseconds(50), cap: Duration = .seconds(1)) {
            self.base = base
            self.cap = cap
        }

        /// The wait after `failures` consecutive failed connects (>= 1), with `jitter` in 0...1
        /// choosing a point in `[d/2, d]`.
        public func delay(afterFailures failures: Int, jitter: Double) -> Duration {
            let exponent = min(max(failures - 1, 0), 30)
            let full = min(cap, base * (1 << exponent))
            return full * (0.5 + 0.5 * min(max(jitter, 0), 1))
        }
    }

    /// Creates a configuration; every parameter defaults as documented on its property.
    /// Validated by ``RedisClient/init(configuration:logger:)``, not here.
    public init(
        host: String = "127.0.0.1", port: Int = 6379, username: String? = nil, password: String? = nil,
        database: Int = 0, connectTimeout: Duration = .seconds(1), commandTimeout: Duration = .seconds(1),
        poolSize: Int = 2, reconnectBackoff: Backoff = Backoff()
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.poolSize = poolSize
        self.reconnectBackoff = reconnectBackoff
    }

    /// Parses `redis://[[user]:password@]host[:port][/database]`. User and password are
    /// percent-encoded where RFC 3986 requires it (``RedisURLUserInfo``: a raw `/`, `?`, `#`, `@` or
    /// stray `%` is refused, never guessed at); a query or fragment is refused; an IPv6 host is written in brackets. `rediss://` (TLS) is refused: hiredis
    /// 0.14 has no TLS, see docs/redis.md for a sidecar. Other fields keep their defaults.
    public init(url: String) throws(RedisError) {
        self.init()
        func invalid(_ why: String) -> RedisError {
            RedisError(.invalidConfiguration, "Redis URL: \(why)", isRetriable: false)
        }
        guard url.hasPrefix("redis://") else {
            throw invalid(url.hasPrefix("rediss://") ? "TLS (rediss://) is not supported by hiredis 0.14" : "must start with redis://")
        }
        // User info first, up to the last `@`: a password's characters never decide where the host starts.
        let (userInfo, afterUserInfo) = try RedisURLUserInfo.split(url.dropFirst("redis://".count), url: "Redis URL")
        username = userInfo.username
        password = userInfo.password
        if afterUserInfo.contains(where: { $0 == "?" || $0 == "#" }) {
            throw invalid("query parameters and fragments are not supported; give pool and timeout settings as ksm settings")
        }
        let authorityEnd = afterUserInfo.firstIndex(of: "/") ?? afterUserInfo.endIndex
        var authority = afterUserInfo[..<authorityEnd]
        let path = afterUserInfo[authorityEnd...].dropFirst()
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("unclosed [ in host") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { throw invalid("junk after host") }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
        }
        guard !host.isEmpty else { throw invalid("empty host") }
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else { throw invalid("bad port") }
            port = value
        }
        if !path.isEmpty {
            guard let value = Int(path), value >= 0 else { throw invalid("bad database") }
            database = value
        }
    }

    /// Host, port, user, database and pool; the password is shown only as `***`.
    public var description: String {
        var text = "redis://"
        if username != nil || password != nil {
            text += "\(username ?? ""):\(password == nil ? "" : "***")@"
        }
        text += host.contains(":") ? "[\(host)]" : host
        text += ":\(port)/\(database) pool=\(poolSize)"
        return text
    }
}
