import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import KSMTestSupport
import Licensing
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Redis restarted without persistence comes back empty (docs/faults.md, fault 3). The worker must notice
/// (`/readyz` 503, `ksm_store_provisioned 0`) and answer jobs retriable instead of a final
/// `unknownTenant` that would be stored and outlive the re-provisioning; once the operator seeds
/// the store again, the same job IDs get their licenses.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct StoreLostStateTests {
    @Test("Redis restarted empty: not ready, jobs retriable, then served again after re-provisioning")
    func restartWithoutPersistence() async throws {
        let fleet = try await Fleet()
        let port = try RedisServerProcess.freeLoopbackPort()
        try await fleet.startWorker(extraArguments: ["--admin-port", "\(port)"])
        let client = try await FleetClient(fleet: fleet)
        func get(_ path: String) async throws -> (Int, String) {
            let (data, response) = try await URLSession.shared.data(from: try #require(URL(string: "http://127.0.0.1:\(port)\(path)")))
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
        }
        func poll(_ path: String, until condition: ((Int, String)) -> Bool) async throws -> (Int, String) {
            var answer = try await get(path)
            let deadline = ContinuousClock.now + .seconds(45)
            while !condition(answer), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
                answer = try await get(path)
            }
            return answer
        }
        let device = SimulatedDevice(trust: client.trust)
        #expect(try await client.request(id: "lost-0", account: "a0", device: device, session: 1).0.status == .ok)
        #expect(try await poll("/readyz") { $0.0 == 200 }.0 == 200)

        // The restart: same port, no data (the fleet's Redis has no persistence).
        fleet.redis.stop()
        try await fleet.redis.start()
        let notReady = try await poll("/readyz") { $0.0 == 503 && $0.1.contains("provisioning marker") }
        #expect(notReady.0 == 503 && notReady.1.contains("provisioning marker"), "\(notReady.1)")
        #expect(try await get("/metrics").1.contains("ksm_store_provisioned 0"))
        // One job, sent as an edge sends it and, after the retriable answer, sent again byte for byte.
        var options = SPCOptions()
        options.assetID = Array(fleet.catalog.assetID(stream: 0, period: 0).utf8)
        options.playback = MediaPlaybackInfo(creationDate: UInt32(Date().timeIntervalSince1970), state: .readyToPlay, sessionID: 2)
        let (spc, session) = try device.makeSPC(options)
        let job = LicenseJob(id: try StoreIdentifier("lost-1"), tenant: try StoreIdentifier(fleet.catalog.tenant), account: try StoreIdentifier("a1"), spc: spc)
        try await client.sendRaw(job.jsonBytes(), key: "a1")
        let lost = try await client.reply("lost-1")
        #expect(
            lost.status == .storeUnavailable && lost.isRetriable && lost.rule == "store:not-provisioned" && lost.ckc == nil, "\(lost.status) \(lost.reason)")

        // Re-provisioned: ready again, and the same job ID gets its license (nothing final was stored).
        let seeded = try await KSMBinary.run([
            "admin", "seed-demo", "--redis-url", fleet.redisURL, "--kek-out", fleet.kekPath + ".again", "--max-streams", "2",
            "--lease-duration", "300", "--streams", "2", "--periods", "4",
        ])
        #expect(seeded.status == 0, "\(String(decoding: seeded.stderr, as: UTF8.self))")
        #expect(try await poll("/readyz") { $0.0 == 200 }.0 == 200)
        #expect(try await get("/metrics").1.contains("ksm_store_provisioned 1"))
        client.forget("lost-1")
        try await client.sendRaw(job.jsonBytes(), key: "a1")
        let served = try await client.reply("lost-1")
        #expect(served.status == .ok && !served.isDuplicate, "\(served.status) \(served.reason)")
        #expect(try CKCOpener.open(try #require(served.ckc), session: session).contentKey.count == 16)
        await client.close()
    }
}
