import Synchronization

/// Lease slots in use across the store, counted every `interval` (default 15 s) rather than per
/// request: a `SCAN` over the slot sets (``RedisKeys/allSlots``) and a pipelined `ZCOUNT` of
/// unexpired members for each page, on every master of a cluster (`SCAN` sees one node's keys). One sample reads at most `maximumKeys` sets (default 200,000)
/// so a huge keyspace cannot turn the gauge into load; `isComplete` says whether it saw them all.
public final class LeaseSlotGauge: Sendable {
    /// One count of the lease slots in use and the accounts holding them, as `WorkerMetrics.Inputs`
    /// carries it (public for that initializer's signature; only the package reads or makes one).
    public struct Sample: Sendable, Hashable {
        package var slots: Int
        package var accounts: Int
        package var isComplete: Bool

        package init(slots: Int, accounts: Int, isComplete: Bool) {
            self.slots = slots
            self.accounts = accounts
            self.isComplete = isComplete
        }
    }

    private let last = Mutex<Sample?>(nil)
    let maximumKeys: Int

    package init(maximumKeys: Int = 200_000) {
        self.maximumKeys = maximumKeys
    }

    /// The last sample; nil until the first one finished.
    package var sample: Sample? { last.withLock { $0 } }

    /// Samples until the task is cancelled. `onError` counts a failed sample (the last good one stays).
    package func monitor(client: any RedisCommandRunner, every interval: Duration = .seconds(15), onError: @Sendable (RedisError) -> Void) async {
        while !Task.isCancelled {
            do throws(RedisError) {
                let sample = try await count(client: client, nowMilliseconds: RedisLicenseStore.currentTimeMilliseconds())
                last.withLock { $0 = sample }
            } catch {
                onError(error)
            }
            try? await Task.sleep(for: interval)
        }
    }

    func count(client: any RedisCommandRunner, nowMilliseconds: Int64) async throws(RedisError) -> Sample {
        var slots = 0
        var accounts = 0
        let stopped = try await client.scanEveryMaster(match: RedisKeys.allSlots) { node, names throws(RedisError) in
            // The node's own keys, so the node's own pool; a key migrating away meanwhile answers
            // a redirect, which is not an integer and is skipped.
            let counts = try await node.pipeline(names.map { ["ZCOUNT", RedisArgument($0), RedisArgument(nowMilliseconds + 1), "+inf"] })
            for value in counts {
                if case .integer(let n) = value, n > 0 {
                    // Saturating: a count no real set reaches must not trap the worker's monitor.
                    let (sum, overflow) = slots.addingReportingOverflow(Int(n))
                    slots = overflow ? .max : sum
                    accounts += 1
                }
            }
            return accounts >= maximumKeys
        }
        return Sample(slots: slots, accounts: accounts, isComplete: !stopped)
    }
}
