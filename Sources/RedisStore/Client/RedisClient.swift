import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// hiredis 0.14 writes with `write(2)`, so a peer that closed mid-pipeline would raise SIGPIPE and
/// kill the process; hiredis's own advice is to ignore the signal. Done once, on first client.
private let ignoreSIGPIPE: Void = {
    _ = signal(SIGPIPE, SIG_IGN)
}()

/// A small pool of Redis connections, each on a thread of its own (see ``RedisConnection``).
///
/// Connections open lazily on first use and reopen after a failure, so the client has no
/// background task and needs no `run()`. A command or pipeline is sent on the connection with the
/// fewest jobs in flight; jobs on one connection run in FIFO order.
///
/// Failure contract: when a connection fails mid-command (reset, EOF, timeout) the command throws a
/// retriable ``RedisError`` and the connection is dropped; the next job reconnects (AUTH, SELECT),
/// and repeated failed connects back off (capped exponential, jittered) during which jobs on that
/// connection fail fast with `.reconnecting`. A command that failed this way may or may not have run
/// on the server: retry only idempotent work (every write of ``RedisLicenseStore`` is).
public final class RedisClient: RedisCommandRunner {
    /// The settings the client was made with (validated; the password is never printed).
    public let configuration: RedisClientConfiguration
    private let connections: [RedisConnection]
    private let inFlight: Mutex<[Int]>

    /// Validates `configuration` (pool size >= 1, port, database) and makes the pool; connects
    /// nothing yet.
    public init(configuration: RedisClientConfiguration, logger: Logger = Logger(label: "fairplayksm.redis")) throws(RedisError) {
        guard configuration.poolSize >= 1, configuration.poolSize <= 64 else {
            throw RedisError(.invalidConfiguration, "pool size \(configuration.poolSize) not in 1...64", isRetriable: false)
        }
        guard (1...65535).contains(configuration.port), configuration.database >= 0, !configuration.host.isEmpty else {
            throw RedisError(.invalidConfiguration, "bad host, port or database", isRetriable: false)
        }
        ignoreSIGPIPE
        self.configuration = configuration
        self.connections = (0..<configuration.poolSize).map {
            RedisConnection(index: $0, configuration: configuration, logger: logger)
        }
        self.inFlight = Mutex(Array(repeating: 0, count: configuration.poolSize))
    }

    /// Sends commands in one round trip on one connection: all are written, then all replies read.
    /// Replies come back in order; error replies are `.error` values, not thrown. Script calls go as
    /// `EVALSHA`, and any that answer `NOSCRIPT` are re-sent as `EVAL` in a second round trip.
    ///
    /// Ordering caveat: a script call that falls back runs after every other command of the
    /// pipeline (script calls keep their order among themselves). Do not put plain commands in a
    /// pipeline that depend on an earlier script call's effects.
    ///
    /// With `durability`, `WAIT` follows on the same connection (see ``RedisDurability``).
    public func pipeline(_ commands: [RedisCommand], durability: RedisDurability?) async throws(RedisError) -> [RedisValue] {
        if commands.isEmpty { return [] }
        let (index, idle) = inFlight.withLock { counts in
            // Fewest jobs in flight, preferring connections not waiting out a reconnect backoff.
            func load(_ i: Int) -> (Int, Int) { (connections[i].isBackingOff ? 1 : 0, counts[i]) }
            var index = 0
            for candidate in counts.indices.dropFirst() where load(candidate) < load(index) { index = candidate }
            counts[index] += 1
            return (index, counts[index] == 1)
        }
        defer { inFlight.withLock { $0[index] -= 1 } }
        return try await connections[index].execute(commands, durability: durability, idle: idle)
    }

    /// Each connection's recent round trips on the socket, a moving average (for tests and
    /// diagnostics; see ``RedisClientConfiguration/inPlaceRoundTripLimit``).
    package var recentRoundTrips: [Duration] { connections.map(\.recentRoundTrip) }

    /// This one server (see ``RedisCommandRunner/masterClients()``).
    public func masterClients() async throws(RedisError) -> [RedisClient] { [self] }
}
