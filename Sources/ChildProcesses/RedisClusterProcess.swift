import Foundation
import RedisStore

#if canImport(Glibc)
    import Glibc
#endif

/// A real Redis Cluster for tests: `masters` × (1 + `replicasPerMaster`) `redis-server` processes on
/// free loopback ports (``RedisServerProcess`` each, `cluster-enabled yes`, a short node timeout),
/// joined by `redis-cli --cluster create`. Ready once every node answers `CLUSTER INFO` with
/// `cluster_state:ok`, all 16384 slots assigned and every node known, and every replica's link to
/// its master is up. Stopped (SIGKILL, node files removed) by ``stop()``, `deinit`, or a failed start.
///
/// `@unchecked Sendable`: the node list is fixed after `init`; the processes are touched only by
/// the test that owns the cluster.
package final class RedisClusterProcess: @unchecked Sendable {
    package let nodes: [RedisServerProcess]
    /// Every node's `requirepass` and `masterauth` (one for the whole cluster: replicas log in to
    /// their masters, and a client follows redirects with one login).
    package let password: String
    /// Node configuration and RDB files in the temporary directory, removed at ``stop()``.
    package let nodeFiles: [String]

    /// Starts the nodes and creates the cluster; throws (with every node stopped) if it does not
    /// become healthy.
    package init(masters: Int = 3, replicasPerMaster: Int = 1, nodeTimeoutMilliseconds: Int = 1000) async throws {
        var nodes: [RedisServerProcess] = []
        var files: [String] = []
        let password = RedisServerProcess.newPassword()
        self.password = password
        do {
            for _ in 0..<(masters * (1 + replicasPerMaster)) {
                let name = "ksm-cluster-\(UUID().uuidString)"
                files += ["\(name).conf", "\(name).rdb"]
                nodes.append(
                    try await RedisServerProcess(
                        password: password,
                        extraArguments: [
                            "--masterauth", password, "--cluster-enabled", "yes", "--cluster-config-file", "\(name).conf",
                            // A replica's full sync goes to this node's own file, never the shared dump.rdb
                            // that every later server in the directory would load.
                            "--dbfilename", "\(name).rdb", "--repl-diskless-load", "on-empty-db",
                            "--cluster-node-timeout", "\(nodeTimeoutMilliseconds)",
                            // A replica answers WAIT and takes over without waiting for a fresh sync.
                            "--cluster-replica-validity-factor", "0",
                            // Replicas sync at once (the default waits 5 s for more replicas to share a sync).
                            "--repl-diskless-sync-delay", "0",
                        ]))
            }
            self.nodes = nodes
            self.nodeFiles = files
        } catch {
            for node in nodes { node.stop() }
            Self.remove(files)
            throw error
        }
        do {
            try await Self.run(
                Self.cliPath,
                ["-a", password, "--no-auth-warning", "--cluster", "create"] + nodes.map { "127.0.0.1:\($0.port)" }
                    + ["--cluster-replicas", "\(replicasPerMaster)", "--cluster-yes"])
            try await waitUntilHealthy()
        } catch {
            stop()
            throw error
        }
    }

    deinit {
        stop()
    }

    /// Kills every node that still runs and removes the node files.
    package func stop() {
        for node in nodes { node.stop() }
        Self.remove(nodeFiles)
    }

    /// Every node as a seed.
    package var seeds: [RedisNodeAddress] {
        nodes.map { RedisNodeAddress(host: "127.0.0.1", port: $0.port) }
    }

    /// `redis-cluster://:password@127.0.0.1:p1,127.0.0.1:p2,...`.
    package var url: String {
        "redis-cluster://:\(password)@" + nodes.map { "127.0.0.1:\($0.port)" }.joined(separator: ",")
    }

    /// A cluster client configuration with the same generous timeouts as ``RedisServerProcess``.
    package func configuration(poolSize: Int = 2) -> RedisClusterConfiguration {
        var configuration = RedisClusterConfiguration(seeds: seeds, node: nodes[0].configuration(poolSize: poolSize))
        configuration.maximumRetries = 12
        return configuration
    }

    /// A single-node client of node `index` (for `CLUSTER` commands and per-node checks).
    package func nodeClient(_ index: Int) throws -> RedisClient {
        try RedisClient(configuration: nodes[index].configuration(poolSize: 1))
    }

    /// The index in ``nodes`` of the node listening on `port`.
    package func index(ofPort port: Int) -> Int? {
        nodes.firstIndex { $0.port == port }
    }

    /// Deletes every key on every master (replicas follow), between tests sharing the cluster.
    package func flushAll() async throws {
        for index in nodes.indices where try await role(index) == "master" {
            _ = try await nodeClient(index).send(["FLUSHALL"])
        }
    }

    /// `master` or `slave`, from `ROLE`.
    package func role(_ index: Int) async throws -> String {
        try await nodeClient(index).send(["ROLE"]).arrayValue?.first?.string ?? ""
    }

    /// Waits until every running node says `cluster_state:ok`, knows every running node and sees all
    /// slots assigned, and every replica's master link is up. Bounded by attempts (see
    /// ``RedisServerProcess``: a loaded host may stall the waits themselves).
    package func waitUntilHealthy(runningNodes: [Int]? = nil) async throws {
        let indices = runningNodes ?? Array(nodes.indices)
        var problem = ""
        for _ in 0..<500 {
            problem = ""
            for index in indices where problem.isEmpty {
                do {
                    let client = try nodeClient(index)
                    let info = try await client.send(["CLUSTER", "INFO"]).string ?? ""
                    let fields = Self.fields(info)
                    if fields["cluster_state"] != "ok" || fields["cluster_slots_assigned"] != "16384"
                        || fields["cluster_slots_ok"] != "16384" || fields["cluster_known_nodes"].flatMap(Int.init) ?? 0 < nodes.count
                    {
                        problem = "node \(index): \(fields["cluster_state"] ?? "?")"
                        continue
                    }
                    let role = try await client.send(["ROLE"]).arrayValue ?? []
                    if role.first?.string == "slave", role.count > 3, role[3].string != "connected" {
                        problem = "replica \(index) not connected"
                    }
                } catch {
                    problem = "node \(index): \(error)"
                }
            }
            if problem.isEmpty { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw RedisError(.clusterUnavailable, "test cluster did not become healthy: \(problem)", isRetriable: false)
    }

    private static func fields(_ info: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in info.split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        return fields
    }

    /// Runs a tool to its end (``ProcessRunner``: bounded, no cooperative thread held); throws on a
    /// non-zero exit, with the tool's last lines.
    private static func run(_ path: String, _ arguments: [String]) async throws {
        let result = try await ProcessRunner.run(URL(fileURLWithPath: path), arguments, mergeOutput: true, timeout: .seconds(120))
        guard result.succeeded else {
            let last = result.stdoutText.split(whereSeparator: \.isNewline).suffix(3).joined(separator: " / ")
            throw RedisError(
                .clusterUnavailable, "\(path) \(arguments.prefix(2).joined(separator: " ")) exited with \(result.status): \(last)", isRetriable: false)
        }
    }

    package static func remove(_ files: [String]) {
        for file in files {
            try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "/" + file)
        }
    }

    private static var cliPath: String {
        for path in ["/usr/bin/redis-cli", "/usr/local/bin/redis-cli", "/opt/homebrew/bin/redis-cli"]
        where FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        return "/usr/bin/redis-cli"
    }
}
