/// A `HOST:PORT` to listen on: `0.0.0.0:8080`, `127.0.0.1:8080`, `[::]:8080`, `localhost:8080`.
package struct ListenAddress: Sendable, Hashable {
    /// The host without brackets: `::` for `[::]`.
    package var host: String
    package var port: Int

    /// Nil unless `text` is a non-empty host, a colon and a port from 1 to 65535; an IPv6 host is
    /// written in brackets, since its own colons would make the port ambiguous.
    package init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65_535).contains(port) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]"), host.count > 2 {
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") || host.contains("[") || host.contains("]") {
            return nil
        }
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace }) else { return nil }
        self.host = host
        self.port = port
    }

    /// The address `text` names; nil, with the problem added, when it names none.
    /// - Parameter source: where `text` came from (a flag, an environment variable or `default`),
    ///   named in the problem.
    package static func resolve(_ text: String, source: String, problems: inout [ConfigurationProblem]) -> ListenAddress? {
        if let address = ListenAddress(text) { return address }
        problems.append(
            .init(
                .invalidValue, source: source,
                message: "\(source) is \"\(text)\", which is not HOST:PORT with a port from 1 to 65535: write e.g. 0.0.0.0:8080 or [::]:8080."))
        return nil
    }
}
