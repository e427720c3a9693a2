import Foundation
import KSMTestSupport
import Licensing
import RedisStore
import Testing

/// `ksm admin devices` and `remove-device` with the real binary against a real redis-server.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct DeviceAdminTests {
    @Test func devicesAreListedAndOneIsRemovedThroughTheBinary() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let url = server.url
        let store = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        let (tenant, account) = (try StoreIdentifier("acme"), try StoreIdentifier("carol"))
        for (index, device) in [UInt8(0xA1), 0xB2].enumerated() {
            let request = LeaseRequest(
                requestID: try StoreIdentifier("reg-\(index)"), tenant: tenant, account: account,
                deviceID: Array(repeating: device, count: 20), sessionID: 1, maxConcurrentStreams: 2,
                leaseDurationSeconds: 60, nowMilliseconds: 1_700_000_000_000, slot: .none, deviceLimit: 3)
            #expect(try await store.acquireLeases([request]) == [.recorded])
        }
        let listed = try await KSMBinary.run(["admin", "devices", "--redis-url", url, "--tenant", "acme", "--account", "carol"])
        #expect(listed.status == 0, "\(String(decoding: listed.stderr, as: UTF8.self))")
        let devices = (listed.json as? [String: Any])?["devices"] as? [String]
        #expect(devices == [String(repeating: "a1", count: 20), String(repeating: "b2", count: 20)])

        let removed = try await KSMBinary.run([
            "admin", "remove-device", "--redis-url", url, "--tenant", "acme", "--account", "carol",
            "--device", String(repeating: "A1", count: 20),
        ])
        #expect(removed.status == 0, "\(String(decoding: removed.stderr, as: UTF8.self))")
        #expect(try await store.registeredDevices(tenant: tenant, account: account) == [Array(repeating: 0xB2, count: 20)])

        // Not registered (any more), or not hex: a clear refusal and exit status 1.
        let again = try await KSMBinary.run([
            "admin", "remove-device", "--redis-url", url, "--tenant", "acme", "--account", "carol",
            "--device", String(repeating: "a1", count: 20),
        ])
        #expect(again.status != 0)
        #expect(String(decoding: again.stderr, as: UTF8.self).contains("is not registered"))
        let notHex = try await KSMBinary.run(["admin", "remove-device", "--redis-url", url, "--tenant", "acme", "--account", "carol", "--device", "xyz"])
        #expect(notHex.status != 0)
        #expect(String(decoding: notHex.stderr, as: UTF8.self).contains("is not hex"))
    }
}
