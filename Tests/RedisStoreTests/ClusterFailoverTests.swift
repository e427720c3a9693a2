import Foundation
import KSMTestSupport
import Licensing
import Testing

@testable import RedisStore

/// A master killed with `kill -9` in the middle of a lease storm, its replica promoted and the dead
/// node back as a replica: every batch is answered (retried as a worker retries `.unavailable`),
/// and with `WAIT` no acknowledged lease slot is lost or doubled.
@Suite(.timeLimit(.minutes(3)))
struct ClusterFailoverTests {
    static func id(_ text: String) -> StoreIdentifier {
        // Test literals are valid by construction.
        try! StoreIdentifier(text)
    }

    static let t0: Int64 = 1_700_000_000_000
    static let accounts = 240
    static let batchSize = 20

    /// Account `n` asks for a stream on `device` (limit 1 per account).
    static func lease(_ n: Int, device: UInt8, request: String) -> LeaseRequest {
        LeaseRequest(
            requestID: id(request), tenant: id("storm"), account: id("acct\(n)"), deviceID: Array(repeating: device, count: 20),
            sessionID: UInt64(device), maxConcurrentStreams: 1, leaseDurationSeconds: 600, nowMilliseconds: t0 + Int64(n))
    }

    /// Sends `batch` until it is answered, as a worker retries a retriable store error.
    static func answered(_ store: RedisLicenseStore, _ batch: [LeaseRequest]) async throws -> (results: [LeaseResult], attempts: Int) {
        var attempts = 0
        var lastError: LicenseStoreError?
        while attempts < 200 {
            attempts += 1
            let outcome: Result<[LeaseResult], LicenseStoreError>
            do { outcome = .success(try await store.acquireLeases(batch)) } catch { outcome = .failure(error) }
            switch outcome {
            case .success(let results):
                return (results, attempts)
            case .failure(let error):
                guard error.isRetriable else { throw error }
                lastError = error
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        throw lastError ?? LicenseStoreError(.unavailable, "no answer")
    }

    @Test("kill -9 of a master mid-storm: every batch answered; with WAIT no slot lost or doubled", arguments: [true, false])
    func masterKilledMidStorm(durable: Bool) async throws {
        let cluster = try await RedisClusterProcess()
        defer { cluster.stop() }
        let client = try RedisClusterClient(configuration: cluster.configuration())
        let store = RedisLicenseStore(client: client, durability: durable ? RedisDurability(replicas: 1, timeout: .milliseconds(500)) : nil)
        let victim = try #require(try await cluster.nodes.indices.asyncFirst { try await cluster.role($0) == "master" })

        // Phase 1: every account takes its one slot on device 1; the master dies a third of the way in.
        let batches = stride(from: 0, to: Self.accounts, by: Self.batchSize).map { start in
            (start..<min(start + Self.batchSize, Self.accounts)).map { Self.lease($0, device: 1, request: "first-\($0)") }
        }
        var retried = 0
        var rejoin: Task<Void, any Error>?
        defer { rejoin?.cancel() }
        let started = ContinuousClock.now
        var killedAt: ContinuousClock.Instant?
        var beforeKill: Duration = .zero
        var recoveredAfter: Duration?
        for (index, batch) in batches.enumerated() {
            if index == batches.count / 3 {
                beforeKill = ContinuousClock.now - started
                cluster.nodes[victim].stop()  // SIGKILL
                killedAt = ContinuousClock.now
                // As an operator would: once its replica took over, the dead node comes back (empty,
                // no AOF here) and rejoins as the new master's replica. Under WAIT its shard takes
                // no lease write until then: the promoted master has no replica to acknowledge.
                rejoin = Task {
                    try await cluster.waitUntilHealthy(runningNodes: cluster.nodes.indices.filter { $0 != victim })
                    try await cluster.nodes[victim].start()
                }
            }
            let (results, attempts) = try await Self.answered(store, batch)
            retried += attempts - 1
            #expect(results.allSatisfy { if case .granted = $0 { true } else { false } }, "batch \(index): \(results)")
            if let killedAt, recoveredAfter == nil { recoveredAfter = ContinuousClock.now - killedAt }
        }
        let perBatchBeforeKill = beforeKill / (batches.count / 3)

        // The cluster settles: the replica promoted, the old master back as its replica.
        try await rejoin?.value
        try await cluster.waitUntilHealthy()

        // Phase 2: a second device per account must be refused (the first slot survived) and each
        // account must hold exactly its first slot.
        var lost = 0
        var lostAccounts: [Int] = []
        var doubled = 0
        for start in stride(from: 0, to: Self.accounts, by: Self.batchSize) {
            let batch = (start..<min(start + Self.batchSize, Self.accounts)).map { Self.lease($0, device: 2, request: "second-\($0)") }
            let (results, _) = try await Self.answered(store, batch)
            for (offset, result) in results.enumerated() {
                if case .granted = result {
                    lost += 1
                    lostAccounts.append(start + offset)
                }
            }
        }
        for n in 0..<Self.accounts {
            let slots = try await store.listSlots(tenant: Self.id("storm"), account: Self.id("acct\(n)"), nowMilliseconds: Self.t0 + 1_000)
            if slots.count > 1 { doubled += 1 }
        }
        print(
            """
            CLUSTER FAILOVER durable=\(durable): \(Self.accounts) accounts in \(batches.count) batches of \(Self.batchSize); \
            \(perBatchBeforeKill) per batch before the kill; first batch answered \(recoveredAfter.map { "\($0)" } ?? "?") after kill -9; \
            \(retried) batch retries; lost slots \(lost) (accounts \(lostAccounts.prefix(30))), doubled \(doubled)
            """)
        if durable {
            #expect(lost == 0, "slots lost with WAIT")
            #expect(doubled == 0, "slots doubled with WAIT")
        }
    }
}

extension Sequence {
    /// The first element for which the async predicate holds.
    func asyncFirst(_ predicate: (Element) async throws -> Bool) async rethrows -> Element? {
        for element in self where try await predicate(element) { return element }
        return nil
    }
}
