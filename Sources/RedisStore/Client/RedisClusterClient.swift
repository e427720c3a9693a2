import Logging
import Synchronization

/// A Redis Cluster client: routes each command to the master of its key's hash slot, one
/// ``RedisClient`` pool per master.
///
/// A pipeline is split per master, sent to all of them at once and reassembled in the caller's
/// order. A `MULTI` ... `EXEC` block travels as one unit, routed by its first key. Replies that
/// redirect are resent: `MOVED` points the slot at the named master, marks the map for a refresh
/// and resends; `ASK` resends once to the named node after `ASKING`; `TRYAGAIN`, `CLUSTERDOWN`, a
/// slot without a master and a master that cannot be reached are retried after a backoff with the
/// map read again. Past ``RedisClusterConfiguration/maximumRedirects`` or
/// ``RedisClusterConfiguration/maximumRetries`` the pipeline throws a retriable
/// `.clusterUnavailable` error. Reads go to masters only (no `READONLY`).
///
/// Retry contract: a command whose master failed mid-pipeline is sent again (to the master the
/// refreshed map names), so it may run twice; send only idempotent work (every write of
/// ``RedisLicenseStore`` is). Scripts are loaded per node by each node's connections: a master
/// that does not know a script (new after a failover, `SCRIPT FLUSH`) answers `NOSCRIPT` and gets
/// it as `EVAL`.
package final class RedisClusterClient: RedisCommandRunner {
    package let configuration: RedisClusterConfiguration
    private let logger: Logger
    private let state: Mutex<State>

    private struct State {
        /// The last slot map read; nil until the first refresh succeeds.
        var map: ClusterSlotMap?
        /// True when a redirect or a failure says the map may be out of date.
        var isStale = true
        /// One pool per node ever routed to (connections open lazily and close with the client).
        var nodes: [RedisNodeAddress: RedisClient] = [:]
        /// The refresh in progress, shared by every caller that needs the map meanwhile.
        var refresh: Task<Result<ClusterSlotMap, RedisError>, Never>?
        /// Round robin for commands without a key.
        var nextKeyless = 0
    }

    /// One pipeline unit: a command, or a `MULTI` ... `EXEC` block, and the slot it goes to.
    private struct Unit {
        var commands: Range<Int>
        var slot: Int?
    }

    /// Validates `configuration` (seeds, the node template as ``RedisClient`` does, database 0);
    /// connects nothing yet: the slot map is read on first use.
    package init(configuration: RedisClusterConfiguration, logger: Logger = Logger(label: "fairplayksm.redis.cluster")) throws(RedisError) {
        guard !configuration.seeds.isEmpty else {
            throw RedisError(.invalidConfiguration, "a Redis Cluster needs at least one seed node", isRetriable: false)
        }
        guard configuration.node.database == 0 else {
            throw RedisError(.invalidConfiguration, "a Redis Cluster has database 0 only", isRetriable: false)
        }
        guard configuration.maximumRedirects >= 1, configuration.maximumRetries >= 0 else {
            throw RedisError(.invalidConfiguration, "maximum redirects must be >= 1 and retries >= 0", isRetriable: false)
        }
        for seed in configuration.seeds {
            var node = configuration.node
            node.host = seed.host
            node.port = seed.port
            _ = try RedisClient(configuration: node, logger: logger)  // validates, connects nothing
        }
        self.configuration = configuration
        self.logger = logger
        self.state = Mutex(State())
    }

    // MARK: Pipelines

    /// With `durability`, every master's part is followed by `WAIT` on its connection; a master
    /// whose replicas did not all acknowledge fails the pipeline with `.notDurable`, not retried here.
    package func pipeline(_ commands: [RedisCommand], durability: RedisDurability?) async throws(RedisError) -> [RedisValue] {
        if commands.isEmpty { return [] }
        let units = Self.units(of: commands)
        var replies = [RedisValue](repeating: .null, count: commands.count)
        var pending = Array(units.indices)
        var askTarget: [Int: RedisNodeAddress] = [:]
        var redirects = 0
        var retries = 0
        var lastProblem = ""
        while true {
            let map = try await slotMap()
            // Route every pending unit; a slot without a master waits for a retry round.
            var byNode: [RedisNodeAddress: [Int]] = [:]
            var order: [RedisNodeAddress] = []
            var unrouted: [Int] = []
            for unit in pending {
                guard let node = askTarget[unit] ?? route(units[unit].slot, map) else {
                    unrouted.append(unit)
                    continue
                }
                if byNode[node] == nil { order.append(node) }
                byNode[node, default: []].append(unit)
            }
            let outcomes = await send(
                durability: durability,
                order.map { node in
                    (
                        node,
                        byNode[node, default: []].flatMap { unit in
                            commands[units[unit].commands].map { askTarget[unit] == nil ? $0 : $0.asking() }
                        }
                    )
                })

            var again: [Int] = unrouted
            var backOff = !unrouted.isEmpty
            var redirected = false
            if !unrouted.isEmpty { lastProblem = "a slot has no master" }
            for (node, outcome) in zip(order, outcomes) {
                let sent = byNode[node, default: []]
                switch outcome {
                case .failure(let error):
                    // The master may be failing over: read the map again, wait, resend. Too few
                    // replica acknowledgements are the caller's to judge (the writes did happen).
                    if !error.isRetriable || error.code == .notDurable { throw error }
                    markStale()
                    lastProblem = "\(node): \(error.message)"
                    backOff = true
                    for unit in sent { askTarget[unit] = nil }
                    again += sent
                case .success(let values):
                    var offset = 0
                    for unit in sent {
                        let range = units[unit].commands
                        let answer = values[offset..<(offset + range.count)]
                        offset += range.count
                        let wasAsked = askTarget.removeValue(forKey: unit) != nil
                        guard let redirect = Self.firstRedirect(in: answer) else {
                            for (index, value) in zip(range, answer) { replies[index] = Self.followable(value) }
                            continue
                        }
                        again.append(unit)
                        lastProblem = redirect.message
                        switch redirect.kind {
                        case .moved(let slot, let target):
                            redirected = true
                            state.withLock { state in
                                state.map?.assign(slot, to: target)
                                state.isStale = true
                            }
                        case .ask(_, let target) where !wasAsked && range.count == 1:
                            redirected = true
                            askTarget[unit] = target
                        case .ask, .tryAgain, .clusterDown:
                            // A transaction cannot follow ASK (ASKING covers one command), nor an
                            // already asked command a second ASK: wait for the migration to move on.
                            backOff = true
                        }
                    }
                }
            }
            if again.isEmpty { return replies }
            if redirected { redirects += 1 }  // rounds, not commands: a moved slot redirects many
            if redirects > configuration.maximumRedirects || (backOff && retries >= configuration.maximumRetries) {
                throw RedisError(.clusterUnavailable, "cluster did not settle: \(lastProblem)", isRetriable: true)
            }
            if backOff {
                retries += 1
                let delay = configuration.retryBackoff.delay(afterFailures: retries, jitter: Double.random(in: 0...1))
                logger.debug("redis cluster retry", metadata: [RedisLoggingKeys.error: "\(lastProblem)", RedisLoggingKeys.retryIn: "\(delay)"])
                try? await Task.sleep(for: delay)
                markStale()
            }
            pending = again.sorted()
        }
    }

    package func masterClients() async throws(RedisError) -> [RedisClient] {
        let map = try await slotMap()
        var clients: [RedisClient] = []
        for node in map.masters { clients.append(try client(for: node)) }
        return clients
    }

    /// Splits `commands` into units: `MULTI` through its `EXEC` (or `DISCARD`) is one, routed by
    /// its first key; every other command is one of its own.
    private static func units(of commands: [RedisCommand]) -> [Unit] {
        var units: [Unit] = []
        var index = 0
        while index < commands.count {
            var end = index + 1
            if commands[index].name == "MULTI" {
                while end < commands.count {
                    let name = commands[end].name
                    end += 1
                    if name == "EXEC" || name == "DISCARD" { break }
                }
            }
            let slot = commands[index..<end].lazy.compactMap(\.routingKey).first.map { HashSlot.of($0) }
            units.append(Unit(commands: index..<end, slot: slot))
            index = end
        }
        return units
    }

    /// The first redirect among a unit's replies that can be followed; a malformed `MOVED` or
    /// `ASK` is not one (``followable(_:)`` turns it into the command's error).
    private static func firstRedirect(in answer: ArraySlice<RedisValue>) -> ClusterRedirect? {
        for value in answer {
            if let redirect = try? ClusterRedirect.parse(value) { return redirect }
        }
        return nil
    }

    /// `value`, or for a `MOVED`/`ASK` that names no valid slot or node, an error reply saying so:
    /// the command was not run, and it is not resent to an address made of garbage.
    private static func followable(_ value: RedisValue) -> RedisValue {
        do throws(RedisError) {
            _ = try ClusterRedirect.parse(value)
            return value
        } catch {
            return .error(error.message)
        }
    }

    private func route(_ slot: Int?, _ map: ClusterSlotMap) -> RedisNodeAddress? {
        if let slot { return map.master(for: slot) }
        guard !map.masters.isEmpty else { return nil }
        let turn = state.withLock { state in
            state.nextKeyless &+= 1
            return state.nextKeyless
        }
        // The magnitude: the counter wraps to negative after Int.max turns.
        return map.masters[Int(turn.magnitude % UInt(map.masters.count))]
    }

    /// Sends each node its part at once; one outcome per node, in order.
    private func send(durability: RedisDurability?, _ parts: [(RedisNodeAddress, [RedisCommand])]) async -> [Result<[RedisValue], RedisError>] {
        func one(_ node: RedisNodeAddress, _ commands: [RedisCommand]) async -> Result<[RedisValue], RedisError> {
            do throws(RedisError) {
                let values = try await client(for: node).pipeline(commands, durability: durability)
                guard values.count == commands.count else {
                    return .failure(RedisError(.unexpectedReply, "\(node) answered \(values.count) of \(commands.count) commands", isRetriable: true))
                }
                return .success(values)
            } catch {
                return .failure(error)
            }
        }
        if parts.count == 1 { return [await one(parts[0].0, parts[0].1)] }
        return await withTaskGroup(of: (Int, Result<[RedisValue], RedisError>).self) { group in
            for (position, part) in parts.enumerated() {
                // On the global executor whatever the caller prefers: the parts go to their nodes at
                // once, and a caller on a crypto thread does not hold one for each node.
                group.addTask(executorPreference: globalConcurrentExecutor) { (position, await one(part.0, part.1)) }
            }
            var outcomes = [Result<[RedisValue], RedisError>](repeating: .success([]), count: parts.count)
            for await (position, outcome) in group { outcomes[position] = outcome }
            return outcomes
        }
    }

    // MARK: Nodes and the slot map

    /// The pool of `node`, made on first use from the configuration's node template.
    package func client(for node: RedisNodeAddress) throws(RedisError) -> RedisClient {
        try state.withLock { (state: inout State) throws(RedisError) -> RedisClient in
            if let client = state.nodes[node] { return client }
            var configuration = configuration.node
            configuration.host = node.host
            configuration.port = node.port
            var logger = logger
            logger[metadataKey: RedisLoggingKeys.node] = "\(node)"
            let client = try RedisClient(configuration: configuration, logger: logger)
            state.nodes[node] = client
            return client
        }
    }

    private func markStale() {
        state.withLock { $0.isStale = true }
    }

    /// The current map; read again first when it may be stale. A failed refresh falls back to the
    /// map known before (redirects fix what it gets wrong); with none known, the failure throws.
    package func slotMap() async throws(RedisError) -> ClusterSlotMap {
        let known = state.withLock { state in (state.map, state.isStale) }
        if let map = known.0, !known.1 { return map }
        do throws(RedisError) {
            return try await refresh()
        } catch {
            if let map = known.0 { return map }
            throw error
        }
    }

    /// Reads the slot map from the known masters, then the seeds, until one answers; concurrent
    /// callers share one read.
    @discardableResult
    package func refresh() async throws(RedisError) -> ClusterSlotMap {
        let task = state.withLock { state in
            if let running = state.refresh { return running }
            var candidates = state.map?.masters ?? []
            for seed in configuration.seeds where !candidates.contains(seed) { candidates.append(seed) }
            // Unstructured on purpose: the read is shared by every caller that comes while it runs,
            // so no one caller's task may own it (a cancelled caller must not cancel the others' read).
            let task = Task { await self.readMap(from: candidates) }
            state.refresh = task
            return task
        }
        return try await task.value.get()
    }

    private func readMap(from candidates: [RedisNodeAddress]) async -> Result<ClusterSlotMap, RedisError> {
        var failure = RedisError(.clusterUnavailable, "no node answered for the slot map", isRetriable: true)
        var result: Result<ClusterSlotMap, RedisError>?
        for node in candidates where result == nil {
            do throws(RedisError) {
                let client = try client(for: node)
                var reply = try await client.pipeline([RedisCommand(["CLUSTER", "SHARDS"])])[0]
                let map: ClusterSlotMap
                if case .error = reply {
                    // Before Redis 7.0: the older form.
                    reply = try await client.send(["CLUSTER", "SLOTS"])
                    map = try ClusterSlotMap(slots: reply, answeredBy: node)
                } else {
                    map = try ClusterSlotMap(shards: reply, answeredBy: node)
                }
                if map.masters.isEmpty {
                    failure = RedisError(.clusterUnavailable, "\(node) knows no master", isRetriable: true)
                } else {
                    result = .success(map)
                }
            } catch {
                failure = error
            }
        }
        let outcome = result ?? .failure(failure)
        state.withLock { state in
            if case .success(let map) = outcome {
                state.map = map
                state.isStale = false
            }
            state.refresh = nil
        }
        return outcome
    }
}
