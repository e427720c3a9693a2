/// An error from ``RedisClient``.
///
/// `isRetriable` says whether the same command may succeed later: true for lost connections,
/// timeouts and a connection waiting out its reconnect backoff, and for the server's transient
/// replies (`LOADING`, `BUSY`, `TRYAGAIN`, `MASTERDOWN`); false for other error replies such as
/// `WRONGTYPE` or a script error. `description` never includes command arguments or passwords.
public struct RedisError: Error, Sendable, Hashable, CustomStringConvertible {
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        fileprivate let raw: String
        /// Could not connect (refused, unreachable, DNS), or AUTH/SELECT failed at connect.
        package static let connectionFailed = Code(raw: "connectionFailed")
        /// The connection failed mid-command (reset, EOF, write error); it was dropped.
        package static let connectionLost = Code(raw: "connectionLost")
        /// No reply within the command timeout; the connection was dropped.
        package static let timeout = Code(raw: "timeout")
        /// The connection is waiting out its reconnect backoff; nothing was sent.
        package static let reconnecting = Code(raw: "reconnecting")
        /// The server answered with an error reply (the message starts with its code, e.g. `WRONGTYPE`).
        package static let serverError = Code(raw: "serverError")
        /// A reply did not have the expected shape.
        package static let unexpectedReply = Code(raw: "unexpectedReply")
        /// A cluster kept answering `TRYAGAIN`, `CLUSTERDOWN` or redirects, or a node stayed
        /// unreachable, past the client's bounded retries (``RedisClusterConfiguration``); retriable.
        package static let clusterUnavailable = Code(raw: "clusterUnavailable")
        /// Fewer replicas than ``RedisDurability/replicas`` acknowledged a pipeline's writes within
        /// its timeout: the writes are on the master but might not survive a failover; retriable.
        package static let notDurable = Code(raw: "notDurable")
        /// The configuration is invalid (bad URL, port, database).
        package static let invalidConfiguration = Code(raw: "invalidConfiguration")
        package var description: String { raw }
    }

    package var code: Code
    package var message: String
    package var isRetriable: Bool
    package var file: String
    package var line: Int

    package init(_ code: Code, _ message: String, isRetriable: Bool, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.message = message
        self.isRetriable = isRetriable
        self.file = file
        self.line = line
    }

    /// The error for a server error reply; transient server states are retriable.
    package static func serverReply(_ message: String, file: String = #fileID, line: Int = #line) -> RedisError {
        let prefix = message.prefix { $0 != " " }
        let transient: Set<Substring> = ["LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN", "CLUSTERDOWN"]
        return RedisError(.serverError, message, isRetriable: transient.contains(prefix), file: file, line: line)
    }

    /// A sentence for logs and people; the code and where it was raised stay in the value.
    public var description: String { "Redis: \(message)" }

    /// Equality ignores where the error was raised.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.isRetriable == rhs.isRetriable
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }
}
