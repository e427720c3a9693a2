import ChildProcesses
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One six-node test cluster for a whole test process, lent to one test at a time and emptied
/// before each: creating a cluster takes seconds, so suites that run the same contract against
/// every backend share it. Tests that change the topology (migrations, failovers) start their own
/// ``RedisClusterProcess``. The nodes are killed at process exit (`atexit`).
package actor SharedRedisCluster {
    private static let instance = SharedRedisCluster()
    /// The node process IDs and files for the exit hook (it cannot capture state).
    private static let nodeProcesses = Mutex<(pids: [Int32], files: [String])>(([], []))

    private var cluster: RedisClusterProcess?
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` with the shared cluster, started on first use, empty, and used by nobody else.
    package static func with<Result: Sendable>(_ body: (RedisClusterProcess) async throws -> Result) async throws -> Result {
        let cluster = try await instance.acquire()
        do {
            try await cluster.flushAll()
            let result = try await body(cluster)
            await instance.release()
            return result
        } catch {
            await instance.release()
            throw error
        }
    }

    private func acquire() async throws -> RedisClusterProcess {
        if busy {
            await withCheckedContinuation { waiters.append($0) }
        }
        busy = true
        if let cluster { return cluster }
        do {
            let started = try await RedisClusterProcess()
            cluster = started
            let pids = started.nodes.compactMap(\.processIdentifier)
            let first = Self.nodeProcesses.withLock { list in
                defer {
                    list.pids += pids
                    list.files += started.nodeFiles
                }
                return list.pids.isEmpty
            }
            if first {
                atexit {
                    let (pids, files) = SharedRedisCluster.nodeProcesses.withLock { $0 }
                    for pid in pids { kill(pid, SIGKILL) }
                    RedisClusterProcess.remove(files)
                }
            }
            return started
        } catch {
            release()
            throw error
        }
    }

    private func release() {
        if waiters.isEmpty {
            busy = false
        } else {
            // Hand over directly: `busy` stays true for the next holder.
            waiters.removeFirst().resume()
        }
    }
}
