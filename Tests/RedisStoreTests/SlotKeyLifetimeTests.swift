import KSMTestSupport
import Licensing
import Testing

@testable import RedisStore

/// How long the lease script keeps an account's slot keys: always past the latest expiry plus a
/// minute, pushed out only when a write would outlive them, and swept of expired members lazily.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct SlotKeyLifetimeTests {
    private static let t0: Int64 = 1_700_000_000_000
    private static func sid(_ text: String) -> StoreIdentifier { try! StoreIdentifier(text) }  // test literals are valid

    private static func lease(_ request: String, device: UInt8 = 1, limit: Int = 2, seconds: UInt32, at now: Int64, endOldest: Bool = false) -> LeaseRequest {
        LeaseRequest(
            requestID: sid(request), tenant: sid("acme"), account: sid("alice"), deviceID: Array(repeating: device, count: 20), sessionID: 1,
            maxConcurrentStreams: limit, leaseDurationSeconds: seconds, nowMilliseconds: now, endOldestWhenFull: endOldest)
    }

    private static func ttl(_ client: RedisClient, _ key: RedisArgument) async throws -> Int64 {
        try await client.send(["PTTL", key]).integerValue ?? -9
    }

    /// A fresh redis-server for one test, its client and the store over it; the server is stopped after.
    private static func withRedis(_ body: (RedisClient, RedisLicenseStore) async throws -> Void) async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let client = try RedisClient(configuration: server.configuration())
        try await body(client, RedisLicenseStore(client: client))
    }

    @Test("a grant sets twice the need; a covered renewal leaves the TTL alone; a longer one pushes it out")
    func slotKeysOutliveTheLatestExpiry() async throws {
        try await Self.withRedis { (client: RedisClient, store: RedisLicenseStore) async throws in
            let (slots, starts) = (
                RedisKeys.slots(Self.sid("acme"), account: Self.sid("alice")), RedisKeys.slotStarts(Self.sid("acme"), account: Self.sid("alice"))
            )

            // Grant of 600 s: need = 600 s + 60 s, set to twice that. (The script's clock is the test's;
            // Redis counts the TTL down in real time, which barely moves here.) The account's first
            // slot writes no start (it reads as the oldest); a second device's slot does.
            #expect(try await store.acquireLeases([Self.lease("g", seconds: 600, at: Self.t0)]) == [.granted(expiresAtMilliseconds: Self.t0 + 600_000)])
            let first = try await Self.ttl(client, slots)
            #expect(first > 1_300_000 && first <= 1_320_000, "\(first)")
            #expect(try await client.send(["EXISTS", starts]).integerValue == 0)
            #expect(
                try await store.acquireLeases([Self.lease("g2", device: 2, seconds: 600, at: Self.t0)]) == [.granted(expiresAtMilliseconds: Self.t0 + 600_000)])
            for key in [slots, starts] {
                let ttl = try await Self.ttl(client, key)
                #expect(ttl > 1_300_000 && ttl <= 1_320_000, "\(key): \(ttl)")
            }

            // A renewal whose expiry plus a minute is still covered: TTL untouched.
            #expect(
                try await store.acquireLeases([Self.lease("r1", seconds: 1_200, at: Self.t0 + 10_000)]) == [
                    .renewed(expiresAtMilliseconds: Self.t0 + 1_210_000)
                ])
            #expect(try await Self.ttl(client, slots) <= 1_320_000)

            // One that outlives the keys: all of them pushed to twice the new need (1,300 s + 60 s).
            #expect(
                try await store.acquireLeases([Self.lease("r2", seconds: 1_300, at: Self.t0 + 20_000)]) == [
                    .renewed(expiresAtMilliseconds: Self.t0 + 1_320_000)
                ])
            for key in [slots, starts] {
                let ttl = try await Self.ttl(client, key)
                #expect(ttl > 2_700_000 && ttl <= 2_720_000, "\(key): \(ttl)")
            }
        }
    }

    @Test("an account's first slot takes the short path: slot keys at twice the need, and a stale ended set left without slots is dropped, not counted")
    func firstSlotDropsAStaleEndedSet() async throws {
        try await Self.withRedis { (client: RedisClient, store: RedisLicenseStore) async throws in
            let (slots, ended) = (
                RedisKeys.slots(Self.sid("acme"), account: Self.sid("alice")), RedisKeys.endedSlots(Self.sid("acme"), account: Self.sid("alice"))
            )
            // An ended member with no slot set beside it (as if the slot set had gone first).
            _ = try await client.send(["SADD", ended, "0101010101010101010101010101010101010101/1"])
            #expect(
                try await store.acquireLeases([Self.lease("g", limit: 1, seconds: 600, at: Self.t0)]) == [.granted(expiresAtMilliseconds: Self.t0 + 600_000)])
            #expect(try await client.send(["EXISTS", ended]).integerValue == 0)
            let ttl = try await Self.ttl(client, slots)
            #expect(ttl > 1_300_000 && ttl <= 1_320_000, "\(ttl)")
            // The stale member would have hidden one live stream from the count: a second device is refused at a limit of 1.
            #expect(
                try await store.acquireLeases([Self.lease("h", device: 2, limit: 1, seconds: 600, at: Self.t0 + 1)])
                    == [.refused(reason: .tooManyStreams, activeCount: 1, limit: 1)])
        }
    }

    @Test("an expired slot is not renewed: the request takes a new slot, and the old member is swept")
    func expiredSlotIsANewGrant() async throws {
        try await Self.withRedis { (client: RedisClient, store: RedisLicenseStore) async throws in
            let slots = RedisKeys.slots(Self.sid("acme"), account: Self.sid("alice"))

            #expect(
                try await store.acquireLeases([Self.lease("a", device: 1, seconds: 60, at: Self.t0)]) == [.granted(expiresAtMilliseconds: Self.t0 + 60_000)])
            #expect(
                try await store.acquireLeases([Self.lease("b", device: 2, seconds: 600, at: Self.t0 + 1)]) == [
                    .granted(expiresAtMilliseconds: Self.t0 + 600_001)
                ])
            // Device 2 renews after device 1 expired: a renewal does not sweep, so the expired member stays...
            #expect(
                try await store.acquireLeases([Self.lease("b2", device: 2, seconds: 600, at: Self.t0 + 70_000)]) == [
                    .renewed(expiresAtMilliseconds: Self.t0 + 670_000)
                ])
            #expect(try await client.send(["ZCARD", slots]).integerValue == 2)
            // ...but never counts: the listing and a limit of 2 ignore it.
            #expect(try await store.listSlots(tenant: Self.sid("acme"), account: Self.sid("alice"), nowMilliseconds: Self.t0 + 70_000).count == 1)
            // Device 1 comes back: its expired score is no slot, so this is a grant, which sweeps first.
            #expect(
                try await store.acquireLeases([Self.lease("a2", device: 1, seconds: 60, at: Self.t0 + 80_000)]) == [
                    .granted(expiresAtMilliseconds: Self.t0 + 140_000)
                ])
            #expect(try await client.send(["ZCARD", slots]).integerValue == 2)
            #expect(
                try await store.acquireLeases([Self.lease("c", device: 3, seconds: 60, at: Self.t0 + 80_001)])
                    == [.refused(reason: .tooManyStreams, activeCount: 2, limit: 2)])
        }
    }

    @Test("ending the oldest stream gives the new ended set the slot keys' lifetime")
    func endedSetGetsTheLifetime() async throws {
        try await Self.withRedis { (client: RedisClient, store: RedisLicenseStore) async throws in
            let ended = RedisKeys.endedSlots(Self.sid("acme"), account: Self.sid("alice"))

            #expect(
                try await store.acquireLeases([Self.lease("a", device: 1, limit: 1, seconds: 600, at: Self.t0)]) == [
                    .granted(expiresAtMilliseconds: Self.t0 + 600_000)
                ])
            let result = try await store.acquireLeases([Self.lease("b", device: 2, limit: 1, seconds: 600, at: Self.t0 + 1, endOldest: true)])
            guard case .grantedEndingOldest = result[0] else {
                Issue.record("expected end-oldest, got \(result)")
                return
            }
            let ttl = try await Self.ttl(client, ended)
            #expect(ttl > 1_300_000 && ttl <= 1_320_002, "\(ttl)")
        }
    }

    @Test("an account's first slot, which records no start, is still the oldest when a full account ends one")
    func firstSlotWithoutAStartIsEndedFirst() async throws {
        try await Self.withRedis { (client: RedisClient, store: RedisLicenseStore) async throws in
            let starts = RedisKeys.slotStarts(Self.sid("acme"), account: Self.sid("alice"))
            // Device 1 takes the first slot, device 2 the second; device 1 then renews past device 2's
            // expiry, so only the start (not the expiry) makes device 1 the oldest.
            #expect(
                try await store.acquireLeases([Self.lease("a", device: 1, seconds: 600, at: Self.t0)]) == [.granted(expiresAtMilliseconds: Self.t0 + 600_000)])
            #expect(
                try await store.acquireLeases([Self.lease("b", device: 2, seconds: 600, at: Self.t0 + 10)]) == [
                    .granted(expiresAtMilliseconds: Self.t0 + 600_010)
                ])
            #expect(try await client.send(["HLEN", starts]).integerValue == 1)
            #expect(
                try await store.acquireLeases([Self.lease("a2", device: 1, seconds: 900, at: Self.t0 + 20)]) == [
                    .renewed(expiresAtMilliseconds: Self.t0 + 900_020)
                ])
            let result = try await store.acquireLeases([Self.lease("c", device: 3, seconds: 600, at: Self.t0 + 30, endOldest: true)])
            guard case .grantedEndingOldest(_, let ended) = result[0] else {
                Issue.record("expected end-oldest, got \(result)")
                return
            }
            #expect(ended.hasPrefix(String(repeating: "01", count: 20)), "\(ended)")
        }
    }
}
