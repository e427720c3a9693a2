import Foundation
import KSMService
import KSMTestSupport
import Licensing
import RedisStore
import Testing
import Wire

/// `ksm admin put-rotation`, `rotations`, `remove-rotation`, `put-tenant --key-seed` and
/// `derive-key` with the real binary against a real redis-server.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct RotationAdminTests {
    func admin(_ arguments: [String]) async throws -> KSMBinary.Result {
        let result = try await KSMBinary.run(["admin"] + arguments)
        #expect(result.status == 0, "ksm admin \(arguments.first ?? ""): \(String(decoding: result.stderr, as: UTF8.self))")
        return result
    }

    @Test func putRotationListsAndRemovesThroughRedis() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let url = server.url
        // Each command reads the wall clock once, somewhere between these readings: the bounds hold
        // however long a loaded CI host stalls either process.
        let beforePut = LicenseProcessor.currentTimeMilliseconds()
        _ = try await admin([
            "put-rotation", "--redis-url", url, "--tenant", "acme", "--asset", "skd://acme/live-1", "--next-asset", "skd://acme/live-2",
            "--next-period", "p2", "--boundary", "+90s", "--keys", "2",
        ])
        let afterPut = LicenseProcessor.currentTimeMilliseconds()
        let listed = try await admin(["rotations", "--redis-url", url])
        let afterList = LicenseProcessor.currentTimeMilliseconds()
        let rows = try #require((listed.json as? [String: Any])?["rotations"] as? [[String: Any]])
        try #require(rows.count == 1)
        #expect(rows[0]["asset"] as? String == "skd://acme/live-1")
        #expect(rows[0]["next-asset"] as? String == "skd://acme/live-2")
        #expect(rows[0]["next-period"] as? String == "p2")
        #expect(rows[0]["keys"] as? Int == 2)
        // "+90s" is 90 s after put-rotation's clock; seconds-to-boundary counts from rotations' clock.
        let boundary = Int64(try #require(rows[0]["boundary"] as? Int))
        #expect(boundary >= beforePut + 90_000 && boundary <= afterPut + 90_000, "boundary \(boundary), put between \(beforePut) and \(afterPut)")
        let seconds = Int64(try #require(rows[0]["seconds-to-boundary"] as? Int))
        #expect(
            seconds >= (boundary - afterList) / 1000 && seconds <= (boundary - afterPut) / 1000,
            "\(seconds) s to boundary \(boundary), listed between \(afterPut) and \(afterList)")
        // What a worker's prefetcher reads.
        let store = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        let due = try await store.dueRotations(from: beforePut, through: afterPut + 120_000)
        #expect(due.map(\.nextAssetID) == [Array("skd://acme/live-2".utf8)])

        let bad = try await KSMBinary.run(["admin", "put-rotation", "--redis-url", url, "--tenant", "acme", "--asset", "a", "--boundary", "tomorrow"])
        #expect(bad.status != 0)
        _ = try await admin(["remove-rotation", "--redis-url", url, "--tenant", "acme", "--asset", "skd://acme/live-1"])
        #expect(try await store.rotations(tenant: nil).isEmpty)
    }

    @Test func keySeedIsStoredWrappedAndDeriveKeyPrintsTheDocumentedVector() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-seed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let seedPath = dir.appendingPathComponent("seed.hex").path
        let kekPath = dir.appendingPathComponent("kek.hex").path
        let seed = Array(UInt8(0)...UInt8(31))
        FileManager.default.createFile(atPath: seedPath, contents: Data(HexEncoding.encode(seed).utf8), attributes: [.posixPermissions: 0o600])
        FileManager.default.createFile(atPath: kekPath, contents: Data(String(repeating: "a1", count: 16).utf8), attributes: [.posixPermissions: 0o600])
        let url = server.url
        _ = try await admin(["put-tenant", "--redis-url", url, "--tenant", "acme", "--kek-id", "kek-a", "--kek", "kek-a=\(kekPath)", "--key-seed", seedPath])
        let store = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        let tenant = try await store.fetch([StoreRequest(tenant: StoreIdentifier("acme"), account: StoreIdentifier("x"), assetID: [1])])[0].tenant
        let wrapped = try #require(tenant?.keySeed)
        #expect(wrapped.count == 40, "RFC 3394 over 32 bytes")
        #expect(wrapped != seed)

        let derived = try await admin(["derive-key", "--key-seed", seedPath, "--asset", "skd://acme/live-1"])
        #expect(String(decoding: derived.stdout, as: UTF8.self) == "key 5bd2de00f6aaf95087414346767cbb84\niv 3235e2aef1b100678947b0d34b7b8fa0\n")

        // A seed file others can read is refused.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: seedPath)
        let refused = try await KSMBinary.run(["admin", "derive-key", "--key-seed", seedPath, "--asset", "a"])
        #expect(refused.status != 0)
    }
}
