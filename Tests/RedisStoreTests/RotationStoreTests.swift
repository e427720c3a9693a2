import KSMTestSupport
import Licensing
import RedisStore
import Testing

/// Rotation schedules and viewer counts through a real redis-server.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct RotationStoreTests {
    static func id(_ text: String) -> StoreIdentifier {
        // Test literals are valid by construction.
        try! StoreIdentifier(text)
    }
    let now: Int64 = 1_700_000_000_000

    @Test(arguments: RedisBackend.allCases)
    func schedulesRoundTripAndDueWindowSelectsByBoundary(backend: RedisBackend) async throws {
        try await backend.withStore { store in
            let a = RotationSchedule(
                tenant: Self.id("acme"), assetID: Array("skd://acme/live-1".utf8), currentPeriod: Self.id("p7"),
                nextAssetID: Array("skd://acme/live-2".utf8), nextPeriod: Self.id("p8"), boundaryMilliseconds: now + 20_000, keysPerViewer: 2)
            let b = RotationSchedule(tenant: Self.id("globex"), assetID: Array("skd://globex/news".utf8), boundaryMilliseconds: now + 10_000)
            let c = RotationSchedule(tenant: Self.id("acme"), assetID: Array("skd://acme/later".utf8), boundaryMilliseconds: now + 600_000)
            for s in [a, b, c] { try await store.putRotation(s) }
            #expect(try await store.rotations(tenant: nil) == [b, a, c], "soonest boundary first")
            #expect(try await store.rotations(tenant: Self.id("acme")) == [a, c])
            #expect(try await store.dueRotations(from: now, through: now + 30_000) == [b, a])

            // Replacing moves the boundary and drops fields left out.
            var moved = a
            moved.boundaryMilliseconds = now + 700_000
            moved.currentPeriod = nil
            try await store.putRotation(moved)
            #expect(try await store.dueRotations(from: now, through: now + 30_000) == [b])
            #expect(try await store.rotations(tenant: Self.id("acme")) == [c, moved])

            try await store.removeRotation(tenant: Self.id("globex"), assetID: b.assetID)
            #expect(try await store.dueRotations(from: now, through: now + 30_000).isEmpty)
        }
    }

    @Test(arguments: RedisBackend.allCases)
    func leasesCountAsLiveViewersOfTheirAssetUntilTheyExpire(backend: RedisBackend) async throws {
        try await backend.withStore { store in
            let asset = Array("skd://acme/live-1".utf8)
            func lease(_ request: String, account: String, session: UInt64, asset: [UInt8]?) -> LeaseRequest {
                var r = LeaseRequest(
                    requestID: Self.id(request), tenant: Self.id("acme"), account: Self.id(account), deviceID: [UInt8](repeating: 7, count: 20),
                    sessionID: session, maxConcurrentStreams: 5, leaseDurationSeconds: 60, nowMilliseconds: now)
                r.viewedAssetID = asset
                return r
            }
            let results = try await store.acquireLeases([
                lease("r1", account: "alice", session: 1, asset: asset),
                lease("r2", account: "bob", session: 1, asset: asset),
                lease("r3", account: "bob", session: 2, asset: asset),
                lease("r4", account: "carol", session: 1, asset: Array("other".utf8)),
                lease("r5", account: "dave", session: 1, asset: nil),
            ])
            #expect(results.count == 5 && results.allSatisfy { if case .granted = $0 { true } else { false } })
            // A renewal of the same session is the same viewer.
            var renewal = lease("r6", account: "alice", session: 1, asset: asset)
            renewal.nowMilliseconds = now + 30_000
            _ = try await store.acquireLeases([renewal])

            let schedule = RotationSchedule(tenant: Self.id("acme"), assetID: asset, boundaryMilliseconds: now + 10_000)
            let other = RotationSchedule(tenant: Self.id("acme"), assetID: Array("other".utf8), boundaryMilliseconds: now + 10_000)
            let unwatched = RotationSchedule(tenant: Self.id("acme"), assetID: Array("nobody".utf8), boundaryMilliseconds: now + 10_000)
            #expect(try await store.viewerCounts([schedule, other, unwatched], nowMilliseconds: now + 1_000) == [3, 1, 0])
            // Past the first leases' expiry only alice's renewed session is live.
            #expect(try await store.viewerCounts([schedule], nowMilliseconds: now + 61_000) == [1])
            #expect(try await store.viewerCounts([], nowMilliseconds: now).isEmpty)
        }
    }

    @Test(arguments: RedisBackend.allCases)
    func tenantKeySeedRoundTripsWrapped(backend: RedisBackend) async throws {
        try await backend.withStore { store in
            let wrapped = [UInt8](repeating: 0x42, count: 40)
            try await store.putTenant(TenantRecord(id: Self.id("acme"), keyEncryptionKeyID: Self.id("kek-a"), keySeed: wrapped))
            try await store.putTenant(TenantRecord(id: Self.id("plain"), keyEncryptionKeyID: Self.id("kek-a")))
            let results = try await store.fetch([
                StoreRequest(tenant: Self.id("acme"), account: Self.id("x"), assetID: [1]),
                StoreRequest(tenant: Self.id("plain"), account: Self.id("x"), assetID: [1]),
            ])
            #expect(results[0].tenant?.keySeed == wrapped)
            #expect(results[1].tenant != nil && results[1].tenant?.keySeed == nil)
        }
    }
}
