import KSMTestSupport
import Licensing
import RedisStore
import Testing

/// Which store a semantic test runs against; all must behave identically.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory, redis, cluster
    var testDescription: String { rawValue }

    /// Runs `body` with a fresh store (for Redis, a fresh server that is killed afterwards; for a
    /// cluster, the shared test cluster emptied first).
    func withStore(_ body: (any LicenseStore) async throws -> Void) async throws {
        switch self {
        case .memory:
            try await body(InMemoryLicenseStore())
        case .redis:
            try await RedisBackend.single.withStore { try await body($0) }
        case .cluster:
            try await RedisBackend.cluster.withStore { try await body($0) }
        }
    }
}

private func id(_ text: String) -> StoreIdentifier {
    // Test literals are valid by construction.
    try! StoreIdentifier(text)
}

/// A realistic epoch in milliseconds, so the Lua script handles 13-digit numbers.
private let t0: Int64 = 1_700_000_000_000

private func lease(
    _ request: String, device: UInt8 = 1, session: UInt64 = 1, account: String = "alice",
    limit: Int = 2, seconds: UInt32 = 600, at now: Int64
) -> LeaseRequest {
    LeaseRequest(
        requestID: id(request), tenant: id("acme"), account: id(account),
        deviceID: Array(repeating: device, count: 20), sessionID: session,
        maxConcurrentStreams: limit, leaseDurationSeconds: seconds, nowMilliseconds: now)
}

@Suite(.serialized, .timeLimit(.minutes(3)))
struct LicenseStoreTests {
    @Test(arguments: StoreKind.allCases)
    func limitHoldsAndRefusalCarriesCounts(kind: StoreKind) async throws {
        try await kind.withStore { (store: any LicenseStore) async throws in
            let results = try await store.acquireLeases([
                lease("r1", device: 1, at: t0),
                lease("r2", device: 2, at: t0),
                lease("r3", device: 3, at: t0),
                lease("b1", device: 3, account: "bob", at: t0),
            ])
            #expect(
                results == [
                    .granted(expiresAtMilliseconds: t0 + 600_000),
                    .granted(expiresAtMilliseconds: t0 + 600_000),
                    .refused(reason: .tooManyStreams, activeCount: 2, limit: 2),
                    .granted(expiresAtMilliseconds: t0 + 600_000),
                ])
            // Same device, another playback session: a second stream, also refused.
            let again = try await store.acquireLeases([lease("r4", device: 1, session: 2, at: t0 + 1)])
            #expect(again == [.refused(reason: .tooManyStreams, activeCount: 2, limit: 2)])
            let slots = try await store.listSlots(tenant: id("acme"), account: id("alice"), nowMilliseconds: t0)
            #expect(slots.map(\.deviceID) == [Array(repeating: 1, count: 20), Array(repeating: 2, count: 20)])
            #expect(slots.allSatisfy { $0.sessionID == 1 && $0.expiresAtMilliseconds == t0 + 600_000 })
        }
    }

    @Test(arguments: StoreKind.allCases)
    func renewalExtendsExpiry(kind: StoreKind) async throws {
        try await kind.withStore { (store: any LicenseStore) async throws in
            #expect(try await store.acquireLeases([lease("r1", at: t0)]) == [.granted(expiresAtMilliseconds: t0 + 600_000)])
            // Playback state 3 near the end of the lease: same slot, new request ID.
            let renewed = try await store.acquireLeases([lease("r2", at: t0 + 550_000)])
            #expect(renewed == [.renewed(expiresAtMilliseconds: t0 + 1_150_000)])
            // Past the first expiry the slot is still live.
            let slots = try await store.listSlots(tenant: id("acme"), account: id("alice"), nowMilliseconds: t0 + 700_000)
            #expect(slots == [LeaseSlot(deviceID: Array(repeating: 1, count: 20), sessionID: 1, expiresAtMilliseconds: t0 + 1_150_000)])
            // A renewal never shortens a lease (a shorter duration, e.g. after a policy change).
            let shorter = try await store.acquireLeases([lease("r3", seconds: 10, at: t0 + 700_000)])
            #expect(shorter == [.renewed(expiresAtMilliseconds: t0 + 1_150_000)])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func expiryFreesTheSlot(kind: StoreKind) async throws {
        try await kind.withStore { (store: any LicenseStore) async throws in
            #expect(try await store.acquireLeases([lease("a1", device: 1, limit: 1, at: t0)]) == [.granted(expiresAtMilliseconds: t0 + 600_000)])
            #expect(
                try await store.acquireLeases([lease("b1", device: 2, limit: 1, at: t0 + 599_999)])
                    == [.refused(reason: .tooManyStreams, activeCount: 1, limit: 1)])
            // At the expiry instant the first lease is over (live while expiresAt > now).
            #expect(
                try await store.acquireLeases([lease("b2", device: 2, limit: 1, at: t0 + 600_000)])
                    == [.granted(expiresAtMilliseconds: t0 + 1_200_000)])
            // The first device comes back too late to renew: its slot is gone and the account is full.
            #expect(
                try await store.acquireLeases([lease("a2", device: 1, limit: 1, at: t0 + 600_001)])
                    == [.refused(reason: .tooManyStreams, activeCount: 1, limit: 1)])
            #expect(try await store.listSlots(tenant: id("acme"), account: id("alice"), nowMilliseconds: t0 + 1_200_000).isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func replayedRequestReturnsStoredResultAndCountsOnce(kind: StoreKind) async throws {
        try await kind.withStore { (store: any LicenseStore) async throws in
            let first = try await store.acquireLeases([lease("r1", device: 1, limit: 2, at: t0)])
            // Redelivered later (even in the same batch twice): same answer, no second slot.
            let replay = try await store.acquireLeases([
                lease("r1", device: 1, limit: 2, at: t0 + 5_000),
                lease("r1", device: 1, limit: 2, at: t0 + 6_000),
            ])
            #expect(replay == [first[0], first[0]])
            #expect(first == [.granted(expiresAtMilliseconds: t0 + 600_000)])
            #expect(try await store.listSlots(tenant: id("acme"), account: id("alice"), nowMilliseconds: t0).count == 1)
            // A second device still fits: the replay did not consume the second slot.
            #expect(
                try await store.acquireLeases([lease("r2", device: 2, limit: 2, at: t0 + 7_000)])
                    == [.granted(expiresAtMilliseconds: t0 + 607_000)])
            // A refusal is replayed too, even once capacity came back.
            let refused = try await store.acquireLeases([lease("r3", device: 3, limit: 2, at: t0 + 8_000)])
            #expect(refused == [.refused(reason: .tooManyStreams, activeCount: 2, limit: 2)])
            #expect(try await store.acquireLeases([lease("r3", device: 3, limit: 2, at: t0 + 700_000)]) == refused)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func fetchReturnsTenantKeyAndPolicy(kind: StoreKind) async throws {
        try await kind.withStore { (store: any LicenseStore) async throws in
            let tenant = TenantRecord(
                id: id("acme"), certificateHashes: [Array(repeating: 0xAB, count: 32), [0x01, 0x02]],
                keyEncryptionKeyID: id("kek-2024"), maxConcurrentStreams: 3, leaseDurationSeconds: 900)
            try await store.putTenant(tenant)
            let asset: [UInt8] = Array("twelve-characters".utf8) + [0x00, 0xFF]
            let key = WrappedContentKey(wrappedKey: (0..<24).map { UInt8($0) }, iv: Array(repeating: 0, count: 16), keyEncryptionKeyID: id("kek-2024"))
            let period2 = WrappedContentKey(
                wrappedKey: Array(repeating: 0x0A, count: 24), iv: Array(repeating: 0x0D, count: 16), keyEncryptionKeyID: id("kek-2024"))
            try await store.putContentKey(key, tenant: id("acme"), assetID: asset, keyPeriod: nil)
            try await store.putContentKey(period2, tenant: id("acme"), assetID: asset, keyPeriod: id("2"))
            try await store.putPolicy(Array(#"{"default":true}"#.utf8), tenant: id("acme"), assetID: nil)
            try await store.putPolicy(Array(#"{"hdcp":1}"#.utf8), tenant: id("acme"), assetID: asset)

            let results = try await store.fetch([
                StoreRequest(tenant: id("acme"), account: id("alice"), assetID: asset),
                StoreRequest(tenant: id("acme"), account: id("bob"), assetID: asset, keyPeriod: id("2")),
                StoreRequest(tenant: id("acme"), account: id("bob"), assetID: asset, keyPeriod: id("3")),
                StoreRequest(tenant: id("acme"), account: id("bob"), assetID: [0x42]),
                StoreRequest(tenant: id("nobody"), account: id("bob"), assetID: asset),
            ])
            let tenantPolicy = Array(#"{"default":true}"#.utf8)
            let assetPolicy = Array(#"{"hdcp":1}"#.utf8)
            #expect(results[0] == StoreResult(tenant: tenant, contentKey: key, tenantPolicy: tenantPolicy, assetPolicy: assetPolicy))
            #expect(results[1] == StoreResult(tenant: tenant, contentKey: period2, tenantPolicy: tenantPolicy, assetPolicy: assetPolicy))
            #expect(results[2] == StoreResult(tenant: tenant, contentKey: nil, tenantPolicy: tenantPolicy, assetPolicy: assetPolicy))
            #expect(results[3] == StoreResult(tenant: tenant, contentKey: nil, tenantPolicy: tenantPolicy))
            #expect(results[4] == StoreResult(tenant: nil, contentKey: nil))
            #expect(try await store.fetch([]).isEmpty)
            #expect(try await store.acquireLeases([]).isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func concurrentBatchesNeverExceedTheLimit(kind: StoreKind) async throws {
        try await kind.withStore { (store: any LicenseStore) async throws in
            // 8 workers, each a batch of 5 new streams for the same account: exactly 3 granted.
            let results = try await withThrowingTaskGroup(of: [LeaseResult].self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        try await store.acquireLeases(
                            (0..<5).map { n in
                                lease("w\(worker)-\(n)", device: UInt8(worker * 5 + n), limit: 3, at: t0 + Int64(n))
                            })
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(results.count == 40)
            #expect(results.filter { if case .granted = $0 { true } else { false } }.count == 3)
            #expect(results.filter { if case .refused(_, 3, 3) = $0 { true } else { false } }.count == 37)
            #expect(try await store.listSlots(tenant: id("acme"), account: id("alice"), nowMilliseconds: t0).count == 3)
        }
    }

    @Test func identifiersRefuseReservedCharacters() {
        for bad in ["", "a{b", "a}b", "a:b", "a b", "a\nb", String(repeating: "x", count: 129)] {
            #expect(throws: LicenseStoreError.self, "\(bad)") { try StoreIdentifier(bad) }
        }
        #expect((try? StoreIdentifier("user@example.com")) != nil)
    }

    @Test func leaseResultEncodingRoundTrips() {
        for result: LeaseResult in [
            .granted(expiresAtMilliseconds: t0), .renewed(expiresAtMilliseconds: 1),
            .refused(reason: .tooManyStreams, activeCount: 4, limit: 4), .held(expiresAtMilliseconds: t0 + 1),
            .grantedEndingOldest(expiresAtMilliseconds: t0, ended: "0a0b/0000000000000001"), .recorded,
        ] {
            #expect(LeaseResult(encoded: result.encoded) == result)
        }
        for malformed in ["", "g:", "q:1", "g:12a", "r:-1", "g:1:", "x:tooManyStreams:1", "x:tooManyStreams:1:z", "n:1", "r", "r1", "h:1:2"] {
            #expect(LeaseResult(encoded: malformed) == nil, "\(malformed)")
        }
    }

    @Test func redisStoreFailsRetriableWhenServerIsDown() async throws {
        let server = try await RedisServerProcess()
        let store = RedisLicenseStore(client: try RedisClient(configuration: server.configuration(poolSize: 1)))
        _ = try await store.acquireLeases([lease("r1", at: t0)])
        server.stop()
        do {
            _ = try await store.acquireLeases([lease("r1", at: t0)])
            Issue.record("no error with the server down")
        } catch {
            #expect(error.code == .unavailable)
            #expect(error.isRetriable)
        }
    }
}
