/// Where one Redis node listens: a cluster seed, or a master named by the slot map or a redirect.
package struct RedisNodeAddress: Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses the `host:port` of a `MOVED`/`ASK` redirect (the host may be an IPv6 address, so the
    /// port is after the last colon, and may be in brackets); nil when the port is missing or
    /// outside 1...65535, or the host is not one a connection can be opened to (see ``isValidHost(_:)``).
    init?(redirectTarget text: Substring) {
        guard let colon = text.lastIndex(of: ":"), let number = Int64(text[text.index(after: colon)...]),
            let port = Self.validPort(number)
        else { return nil }
        var host = text[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard Self.isValidHost(host) else { return nil }
        self.init(host: String(host), port: port)
    }

    /// `port` as an `Int` when it is a TCP port a node can listen on (1...65535).
    package static func validPort(_ port: Int64) -> Int? {
        (1...65535).contains(port) ? Int(port) : nil
    }

    /// Whether `host` can name a node: 1 to 255 bytes (a DNS name's limit) of printable ASCII
    /// without spaces, or any non-ASCII (an internationalized name is the resolver's to judge);
    /// never `?`, which Redis prints for a node with no known endpoint.
    package static func isValidHost(_ host: some StringProtocol) -> Bool {
        let utf8 = host.utf8
        guard !utf8.isEmpty, utf8.count <= 255, host != "?" else { return false }
        return utf8.allSatisfy { $0 > 0x20 && $0 != 0x7F }
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
