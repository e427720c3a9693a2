/// What the license store needs from Redis, met by the single-node ``RedisClient`` and by
/// ``RedisClusterClient``, so one store works against either.
///
/// `pipeline` answers one reply per command, in the caller's order; error replies are `.error`
/// values, and only failures of the connection (or of the cluster, after bounded retries) throw.
public protocol RedisCommandRunner: Sendable {
    /// Sends commands as one pipeline (one round trip per node involved) and answers in order; with
    /// `durability`, each connection that wrote then sends `WAIT` and too few acknowledgements
    /// throw `.notDurable`.
    func pipeline(_ commands: [RedisCommand], durability: RedisDurability?) async throws(RedisError) -> [RedisValue]

    /// A client for each master, for work that must visit every node (`SCAN` of the whole keyspace,
    /// `INFO`); a single Redis answers itself.
    func masterClients() async throws(RedisError) -> [RedisClient]
}

extension RedisCommandRunner {
    /// Sends commands as one pipeline, answered in order, without waiting for replicas.
    package func pipeline(_ commands: [RedisCommand]) async throws(RedisError) -> [RedisValue] {
        try await pipeline(commands, durability: nil)
    }

    /// Sends one command. An error reply throws a ``RedisError`` with code `.serverError`
    /// (non-retriable unless the server is in a transient state such as `LOADING`).
    package func send(_ command: [RedisArgument]) async throws(RedisError) -> RedisValue {
        try Self.throwingServerError(try await pipeline([RedisCommand(command)])[0])
    }

    /// Sends plain commands as one pipeline; replies in order, error replies as `.error` values.
    package func pipeline(_ commands: [[RedisArgument]]) async throws(RedisError) -> [RedisValue] {
        try await pipeline(commands.map { RedisCommand($0) })
    }

    /// Runs a script with `EVALSHA`, falling back to `EVAL` on `NOSCRIPT`. An error reply throws.
    package func evalScript(_ script: RedisScript, keys: [RedisArgument], args: [RedisArgument]) async throws(RedisError) -> RedisValue {
        try Self.throwingServerError(try await pipeline([.evalScript(script, keys: keys, arguments: args)])[0])
    }

    private static func throwingServerError(_ value: RedisValue) throws(RedisError) -> RedisValue {
        if case .error(let message) = value { throw RedisError.serverReply(message) }
        return value
    }
}
