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
    /// Reconnect backoff after failed connects. Default: base 50 ms, cap 5 s.
    public var reconnectBackoff: Backoff = Backoff()

    /// Capped exponential backoff with jitter: after the n-th consecutive failed connect a
    /// connection waits a random time in `[d/2, d]`, `d = min(cap, base * 2^(n-1))`, before trying
    /// again. The first reconnect after a connection is lost is attempted at once.
    public struct Backoff: Sendable, Hashable {
        /// Default: 50 ms.
        public var base: Duration
        /// Default: 5 s.
        public var cap: Duration

        public init(base: Duration = .milliseconds(50), cap: Duration = .seconds(5)) {
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

    /// Parses `redis://[[user]:password@]host[:port][/database]`. User and password may be
    /// percent-encoded; an IPv6 host is written in brackets. `rediss://` (TLS) is refused: hiredis
    /// 0.14 has no TLS, see docs/redis.md for a sidecar. Other fields keep their defaults.
    public init(url: String) throws(RedisError) {
        self.init()
        func invalid(_ why: String) -> RedisError {
            RedisError(.invalidConfiguration, "Redis URL: \(why)", isRetriable: false)
        }
        guard url.hasPrefix("redis://") else {
            throw invalid(url.hasPrefix("rediss://") ? "TLS (rediss://) is not supported by hiredis 0.14" : "must start with redis://")
        }
        var rest = Substring(url.dropFirst("redis://".count))
        if let query = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            rest = rest[..<query]
        }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        let path = rest[authorityEnd...].dropFirst()
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                let user = try Self.percentDecoded(userInfo[..<colon])
                username = user.isEmpty ? nil : user
                password = try Self.percentDecoded(userInfo[userInfo.index(after: colon)...])
            } else {
                // `redis://secret@host`: a lone user-info is the password, as redis-cli reads it.
                password = try Self.percentDecoded(userInfo)
            }
        }
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

    private static func percentDecoded(_ text: Substring) throws(RedisError) -> String {
        var out = [UInt8]()
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            else {
                throw RedisError(.invalidConfiguration, "Redis URL: bad percent-encoding", isRetriable: false)
            }
            out.append(value)
        }
        return String(decoding: out, as: UTF8.self)
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
