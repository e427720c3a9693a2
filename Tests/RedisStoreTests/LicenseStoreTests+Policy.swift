import Foundation
import KSMTestSupport
import Licensing
import Testing

@testable import RedisStore

/// The policy side effects of one write (device registry, end-oldest, hold, rental start, offline
/// records, invalidated IDs, token secrets), identical in memory and in Redis.
extension LicenseStoreTests {
    private static func sid(_ text: String) -> StoreIdentifier { try! StoreIdentifier(text) }  // test literals are valid
    private static let now: Int64 = 1_700_000_000_000

    private static func write(
        _ request: String, device: UInt8, session: UInt64 = 1, limit: Int = 2, slot: LeaseRequest.SlotMode = .acquireOrRenew,
        endOldest: Bool = false, deviceLimit: Int? = nil, at now: Int64 = now
    ) -> LeaseRequest {
        LeaseRequest(
            requestID: sid(request), tenant: sid("acme"), account: sid("alice"), deviceID: Array(repeating: device, count: 20), sessionID: session,
            maxConcurrentStreams: limit, leaseDurationSeconds: 60, nowMilliseconds: now, slot: slot, endOldestWhenFull: endOldest, deviceLimit: deviceLimit)
    }

    @Test(arguments: StoreKind.allCases)
    func policyWritesDeviceLimitEndOldestHoldRentalAndOffline(kind: StoreKind) async throws {
        try await kind.withStore { (store: any LicenseStore) async throws in
            let t = Self.now
            // Device limit 2: a third device is refused and takes no slot; a known device passes.
            let devices = try await store.acquireLeases([
                Self.write("d1", device: 1, slot: .none, deviceLimit: 2), Self.write("d2", device: 2, slot: .none, deviceLimit: 2),
                Self.write("d3", device: 3, deviceLimit: 2), Self.write("d4", device: 1, slot: .none, deviceLimit: 2),
            ])
            #expect(devices == [.recorded, .recorded, .refused(reason: .deviceLimitReached, activeCount: 2, limit: 2), .recorded])
            #expect(try await store.listSlots(tenant: Self.sid("acme"), account: Self.sid("alice"), nowMilliseconds: t).isEmpty)

            // End-oldest with a limit of 1: the second stream ends the first, whose renewal and hold are refused.
            let streams = try await store.acquireLeases([
                Self.write("s1", device: 1, session: 1, limit: 1, endOldest: true),
                Self.write("s2", device: 2, session: 2, limit: 1, endOldest: true, at: t + 10),
                Self.write("s3", device: 1, session: 1, limit: 1, endOldest: true, at: t + 20),
                Self.write("s4", device: 1, session: 1, limit: 1, slot: .hold, at: t + 20),
                Self.write("s5", device: 2, session: 2, limit: 1, slot: .hold, at: t + 30),
                Self.write("s6", device: 9, session: 9, limit: 1, slot: .hold, at: t + 30),
            ])
            let member1 = LeaseSlot.member(deviceID: Array(repeating: 1, count: 20), sessionID: 1)
            #expect(streams[0] == .granted(expiresAtMilliseconds: t + 60_000))
            #expect(streams[1] == .grantedEndingOldest(expiresAtMilliseconds: t + 60_010, ended: member1))
            #expect(streams[2] == .refused(reason: .streamEnded, activeCount: 1, limit: 1))
            #expect(streams[3] == .refused(reason: .streamEnded, activeCount: 1, limit: 1))
            #expect(streams[4] == .held(expiresAtMilliseconds: t + 60_010))
            #expect(streams[5] == .refused(reason: .noLiveSlot, activeCount: 1, limit: 1))
            // `ksm admin slots` (listSlots) shows only the live stream, not the one end-oldest ended.
            #expect(
                try await store.listSlots(tenant: Self.sid("acme"), account: Self.sid("alice"), nowMilliseconds: t + 40)
                    == [LeaseSlot(deviceID: Array(repeating: 2, count: 20), sessionID: 2, expiresAtMilliseconds: t + 60_010)])

            // Rental start: first write wins; offline records and invalidated IDs are read back.
            let asset = Array("skd://acme/rental".utf8)
            let record = OfflineLicenseRecord(
                streamID: Array(repeating: 0xAB, count: 16), titleID: Array(repeating: 0xCD, count: 16), assetID: "skd://acme/rental",
                deviceID: Array(repeating: 1, count: 20), issuedAt: t, storageSeconds: 100, playbackSeconds: 10)
            var first = Self.write("r1", device: 1, slot: .none)
            first.rentalAssetID = asset
            first.offlineRecords = [record]
            var second = Self.write("r2", device: 1, slot: .none, at: t + 5000)
            second.rentalAssetID = asset
            second.invalidatedStreamIDs = [record.streamID]
            #expect(try await store.acquireLeases([first, second]) == [.recorded, .recorded])
            let read = try await store.fetch([
                StoreRequest(tenant: Self.sid("acme"), account: Self.sid("alice"), assetID: asset, accountReads: [.rentalStart, .offlineRecords]),
                StoreRequest(tenant: Self.sid("acme"), account: Self.sid("bob"), assetID: asset, accountReads: [.rentalStart]),
            ])
            #expect(read[0].rentalStartRead && read[0].rentalStartedAt == t)
            #expect(read[0].offlineRecords == [record])
            #expect(read[1].rentalStartRead && read[1].rentalStartedAt == nil && read[1].offlineRecords.isEmpty)

            // In Redis, each account record is kept for the retention after its last write, not forever.
            if let redis = store as? RedisLicenseStore {
                let keep = RedisLicenseStore.accountRecordRetentionMilliseconds
                for key in [RedisKeys.devices, RedisKeys.rentals, RedisKeys.offline, RedisKeys.invalidated] {
                    let name = key(Self.sid("acme"), Self.sid("alice"))
                    let ttl = try await redis.client.send(["PTTL", name]).integerValue ?? -9
                    #expect(ttl > keep - 60_000 && ttl <= keep, "\(name): \(ttl)")
                }
            }

            // Token secrets round-trip with the tenant record (wrapped bytes, opaque to the store).
            let tenant = TenantRecord(
                id: Self.sid("acme"), keyEncryptionKeyID: Self.sid("kek"), entitlementSecrets: [Self.sid("k1"): Array(repeating: 7, count: 40)])
            try await store.putTenant(tenant)
            #expect(try await store.fetch([StoreRequest(tenant: Self.sid("acme"), account: Self.sid("alice"), assetID: asset)])[0].tenant == tenant)
        }
    }

    /// The account's first slot records no start in Redis (it reads as started at 0); the in-memory
    /// store counts it the same way, so a tie is ended alike in both.
    @Test(arguments: StoreKind.allCases)
    func endOldestOnATieEndsTheAccountsFirstSlot(kind: StoreKind) async throws {
        try await kind.withStore { (store: any LicenseStore) async throws in
            let t = Self.now
            // Two first streams in one batch, the same millisecond; the second device's sorts first by
            // member name, so only the first-slot rule makes device 2's the one ended.
            var first = Self.write("t1", device: 2, session: 2, endOldest: true)
            first.leaseDurationSeconds = 120
            let both = try await store.acquireLeases([first, Self.write("t2", device: 1, session: 1, endOldest: true)])
            #expect(both == [.granted(expiresAtMilliseconds: t + 120_000), .granted(expiresAtMilliseconds: t + 60_000)])
            let third = try await store.acquireLeases([Self.write("t3", device: 3, session: 3, endOldest: true, at: t + 10)])
            #expect(
                third == [
                    .grantedEndingOldest(expiresAtMilliseconds: t + 60_010, ended: LeaseSlot.member(deviceID: Array(repeating: 2, count: 20), sessionID: 2))
                ])
        }
    }
}

/// Operators' view of the device registry: list and remove, and a removal frees a place at once.
@Suite("Device registry administration")
struct DeviceRegistryAdminTests {
    private static func sid(_ text: String) -> StoreIdentifier { try! StoreIdentifier(text) }  // test literals are valid

    private static func register(_ request: String, device: UInt8) -> LeaseRequest {
        LeaseRequest(
            requestID: sid(request), tenant: sid("acme"), account: sid("bob"), deviceID: Array(repeating: device, count: 20), sessionID: 1,
            maxConcurrentStreams: 2, leaseDurationSeconds: 60, nowMilliseconds: 1_700_000_000_000, slot: .none, deviceLimit: 2)
    }

    @Test("lists registered devices, removes one, and the freed place takes a new device")
    func listRemoveAndReuse() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let store = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        let (tenant, account) = (Self.sid("acme"), Self.sid("bob"))
        #expect(try await store.registeredDevices(tenant: tenant, account: account).isEmpty)

        let first = try await store.acquireLeases([Self.register("r1", device: 2), Self.register("r2", device: 1), Self.register("r3", device: 3)])
        #expect(first == [.recorded, .recorded, .refused(reason: .deviceLimitReached, activeCount: 2, limit: 2)])
        #expect(try await store.registeredDevices(tenant: tenant, account: account) == [Array(repeating: 1, count: 20), Array(repeating: 2, count: 20)])

        #expect(try await store.removeDevice(tenant: tenant, account: account, deviceID: Array(repeating: 2, count: 20)))
        #expect(try await store.removeDevice(tenant: tenant, account: account, deviceID: Array(repeating: 2, count: 20)) == false)
        #expect(try await store.registeredDevices(tenant: tenant, account: account) == [Array(repeating: 1, count: 20)])

        // The third device now fits (a new request ID: the refused one is remembered as refused).
        #expect(try await store.acquireLeases([Self.register("r4", device: 3)]) == [.recorded])
        #expect(try await store.registeredDevices(tenant: tenant, account: account).count == 2)
    }
}
