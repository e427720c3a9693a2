import Dispatch
import Logging
import OwnedThreads
import Synchronization

/// One Redis connection on its own serial `DispatchQueue`.
///
/// Every hiredis call (connect, write, blocking read) runs on `queue`, so Swift's cooperative pool
/// never blocks; callers suspend on a continuation. Jobs run one after another in FIFO order, so a
/// pipeline has the connection to itself from its first write to its last reply.
///
/// A caller on a thread that may block (`BlockingThread`: the crypto threads, running a small
/// batch) runs its pipeline through `queue.sync` instead, on its own thread: the round trip then
/// wakes no queue thread and resumes no continuation. Only when that costs the caller nothing but the
/// round trip itself: the connection is connected and no other job is on it, the pipeline has no
/// `WAIT`, and the connection's recent round trips were short
/// (``RedisClientConfiguration/inPlaceRoundTripLimit``).
/// Otherwise it goes through the queue like any other, so a crypto thread waits in place for its own
/// short round trip, not for another caller's pipeline, a connect, a reconnect backoff, replicas or
/// a server across a network (a job queued in the instant between the check and the call can still
/// go first).
///
/// `@unchecked Sendable`: the mutable state below is touched only from jobs on `queue`.
final class RedisConnection: @unchecked Sendable {
    private let configuration: RedisClientConfiguration
    private let logger: Logger
    private let queue: DispatchQueue
    /// The end of the current reconnect backoff, in nanoseconds after `epoch` (0: none), readable
    /// from any thread so the pool can steer around this connection.
    private let backoffEnd = Atomic<Int64>(0)
    /// True while the queue holds an open context, readable from any thread (the in-place path).
    private let connected = Atomic<Bool>(false)
    /// The recent round trips' time on the socket, nanoseconds, a moving average (one eighth of each
    /// new one): written on `queue`, read from any thread (the in-place path).
    private let roundTripAverage = Atomic<Int64>(0)
    private let epoch = ContinuousClock.now

    /// True while the connection waits out a reconnect backoff; the pool prefers other connections.
    var isBackingOff: Bool {
        let end = backoffEnd.load(ordering: .relaxed)
        return end != 0 && Self.nanoseconds(ContinuousClock.now - epoch) < end
    }

    /// The recent round trips' average (for tests and diagnostics).
    var recentRoundTrip: Duration { .nanoseconds(roundTripAverage.load(ordering: .relaxed)) }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    // Confined to `queue`.
    private var context: HiredisContext?
    private var failedConnects = 0
    private var nextConnectAt: ContinuousClock.Instant?

    init(index: Int, configuration: RedisClientConfiguration, logger: Logger) {
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: RedisLoggingKeys.connection] = "\(index)"
        self.logger = logger
        self.queue = DispatchQueue(label: "fairplayksm.redis.connection.\(index)")
    }

    /// Runs `commands` as one pipeline: all are written, then all replies read, in order.
    /// Error replies come back as `.error` values; only connection-level failures throw.
    /// With `durability`, `WAIT` follows the replies (and any `EVAL` fallback) on this connection.
    /// - Parameter idle: no other job is on this connection (the pool's count), so a caller that may
    ///   block can run the pipeline in place.
    func execute(_ commands: [RedisCommand], durability: RedisDurability? = nil, idle: Bool = false) async throws(RedisError) -> [RedisValue] {
        if idle, durability == nil, connected.load(ordering: .acquiring), BlockingThread.isCurrent,
            roundTripAverage.load(ordering: .relaxed) <= Self.nanoseconds(configuration.inPlaceRoundTripLimit)
        {
            return try queue.sync { self.executeOnQueue(commands, durability: nil) }.get()
        }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<[RedisValue], RedisError>, Never>) in
            queue.async {
                continuation.resume(returning: self.executeOnQueue(commands, durability: durability))
            }
        }
        return try result.get()
    }

    // MARK: - On the queue

    private func executeOnQueue(_ commands: [RedisCommand], durability: RedisDurability?) -> Result<[RedisValue], RedisError> {
        do throws(RedisError) {
            let context = try connectedContext()
            do throws(RedisError) {
                let started = ContinuousClock.now
                let replies = try run(commands, on: context)
                let sample = Self.nanoseconds(ContinuousClock.now - started)
                let average = roundTripAverage.load(ordering: .relaxed)
                roundTripAverage.store(average + (sample - average) / 8, ordering: .relaxed)
                guard let durability else { return .success(replies) }
                let acknowledged = try waitForReplicas(durability, on: context)
                guard acknowledged >= durability.replicas else {
                    // The connection is fine; only the replicas are behind.
                    return .failure(
                        RedisError(
                            .notDurable, "\(acknowledged) of \(durability.replicas) replicas acknowledged within \(durability.timeout)", isRetriable: true))
                }
                return .success(replies)
            } catch {
                // Connection-level failure: replies may be out of step, so the context is dropped.
                // The next job reconnects at once; failed reconnects back off.
                self.context = nil
                connected.store(false, ordering: .releasing)
                logger.debug("redis connection dropped", metadata: [RedisLoggingKeys.error: "\(error)"])
                return .failure(error)
            }
        } catch {
            return .failure(error)
        }
    }

    private func connectedContext() throws(RedisError) -> HiredisContext {
        if let context { return context }
        let now = ContinuousClock.now
        if let nextConnectAt, now < nextConnectAt {
            throw RedisError(.reconnecting, "reconnecting in \(nextConnectAt - now)", isRetriable: true)
        }
        do throws(RedisError) {
            let context = try HiredisContext.connect(
                host: configuration.host, port: configuration.port, timeout: configuration.connectTimeout)
            try context.setTimeout(configuration.commandTimeout)
            try handshake(context)
            self.context = context
            connected.store(true, ordering: .releasing)
            if failedConnects > 0 {
                logger.debug("redis reconnected", metadata: [RedisLoggingKeys.failedConnects: "\(failedConnects)"])
            }
            failedConnects = 0
            nextConnectAt = nil
            backoffEnd.store(0, ordering: .relaxed)
            return context
        } catch {
            failedConnects += 1
            let delay = configuration.reconnectBackoff.delay(afterFailures: failedConnects, jitter: Double.random(in: 0...1))
            nextConnectAt = ContinuousClock.now + delay
            backoffEnd.store(Self.nanoseconds(ContinuousClock.now + delay - epoch), ordering: .relaxed)
            logger.debug(
                "redis connect failed",
                metadata: [RedisLoggingKeys.error: "\(error)", RedisLoggingKeys.retryIn: "\(delay)"])
            if error.code == .timeout || error.code == .connectionLost || error.code == .unexpectedReply {
                throw RedisError(.connectionFailed, "during connect: \(error.message)", isRetriable: true)
            }
            throw error
        }
    }

    /// `WAIT replicas timeout`: how many replicas have every write this connection made. The read
    /// timeout is stretched past the wait when the wait is the longer.
    private func waitForReplicas(_ durability: RedisDurability, on context: HiredisContext) throws(RedisError) -> Int {
        let stretch = configuration.commandTimeout != .zero && durability.timeout >= configuration.commandTimeout
        if stretch { try context.setTimeout(configuration.commandTimeout + durability.timeout) }
        try context.append(["WAIT", RedisArgument(durability.replicas), RedisArgument(durability.timeoutMilliseconds)])
        let reply = try context.readReply()
        if stretch { try context.setTimeout(configuration.commandTimeout) }
        if case .error(let message) = reply {
            // A master demoted by a failover refuses WAIT. Its keyed writes were redirected, so
            // nothing was written here: retriable, and a cluster client reads the slot map again.
            if message.hasPrefix("ERR WAIT cannot be used with replica") {
                throw RedisError(.serverError, "\(message.prefix { $0 != "." }) (this node is no longer a master)", isRetriable: true)
            }
            throw RedisError.serverReply(message)
        }
        guard let count = reply.integerValue else {
            throw RedisError(.unexpectedReply, "WAIT answered something other than a count", isRetriable: false)
        }
        return Int(count)
    }

    /// AUTH and SELECT, pipelined in one round trip.
    private func handshake(_ context: HiredisContext) throws(RedisError) {
        var commands: [[RedisArgument]] = []
        if let password = configuration.password {
            if let username = configuration.username {
                commands.append(["AUTH", RedisArgument(username), RedisArgument(password)])
            } else {
                commands.append(["AUTH", RedisArgument(password)])
            }
        }
        if configuration.database != 0 {
            commands.append(["SELECT", RedisArgument(configuration.database)])
        }
        guard !commands.isEmpty else { return }
        for command in commands { try context.append(command) }
        for command in commands {
            if case .error(let message) = try context.readReply() {
                // Auth failures are configuration problems, but a server restarting may answer
                // LOADING; keep the server's code in the message, never the password.
                var error = RedisError.serverReply(message)
                error.code = .connectionFailed
                error.message = "\(command[0]) failed: \(message)"
                throw error
            }
        }
    }

    private func run(_ commands: [RedisCommand], on context: HiredisContext) throws(RedisError) -> [RedisValue] {
        // First use of a script: SCRIPT LOAD it (one extra round trip, once per script object).
        var unloaded: [ObjectIdentifier: RedisScript] = [:]
        for command in commands {
            if case .script(let script) = command.kind, script.sha1 == nil {
                unloaded[ObjectIdentifier(script)] = script
            }
        }
        if !unloaded.isEmpty {
            let scripts = Array(unloaded.values)
            for script in scripts { try context.append(["SCRIPT", "LOAD", RedisArgument(script.source)]) }
            for script in scripts {
                let reply = try context.readReply()
                if let sha = reply.string, case .bulkString = reply {
                    script.remember(sha1: sha)
                }
                // An error reply (e.g. a syntax error) is left for EVAL below to report per command.
            }
        }

        // The whole pipeline in one buffer, handed to hiredis in one call.
        var wire: [UInt8] = []
        wire.reserveCapacity(commands.reduce(0) { $0 + $1.arguments.bytes.count + 80 })
        for command in commands { command.write(into: &wire) }
        try context.append(wire: wire)
        var replies = [RedisValue]()
        replies.reserveCapacity(commands.count)
        for command in commands {
            if command.isAsking { _ = try context.readReply() }  // ASKING's +OK
            replies.append(try context.readReply())
        }

        // NOSCRIPT (the server lost its script cache: restart, failover, SCRIPT FLUSH): the script
        // did not run, so re-sending it as EVAL is safe. EVAL also caches it again server-side.
        let missing = commands.indices.filter { index in
            guard case .script = commands[index].kind, case .error(let message) = replies[index] else { return false }
            return message.hasPrefix("NOSCRIPT")
        }
        if !missing.isEmpty {
            logger.debug("redis NOSCRIPT, falling back to EVAL", metadata: [RedisLoggingKeys.count: "\(missing.count)"])
            var wire: [UInt8] = []
            for index in missing { commands[index].writeEval(into: &wire) }
            try context.append(wire: wire)
            for index in missing {
                if commands[index].isAsking { _ = try context.readReply() }
                replies[index] = try context.readReply()
            }
        }
        return replies
    }
}
