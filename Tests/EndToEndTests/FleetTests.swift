import FairPlay
import FairPlayDevice
import Foundation
import KSMLoad
import KSMService
import KSMTestSupport
import Licensing
import Testing
import Wire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The fleet as it runs in production, on loopback: redis-server, `ksm broker`, two `ksm serve`
/// processes in one consumer group, and `ksm loadgen` or a test client on Kafka.
@Suite(.serialized, .timeLimit(.minutes(5))) struct FleetTests {
    @Test(
        "Two workers in one group, each allocating with jemalloc, answer every loadgen job with a correct CKC, on one Redis or a Redis Cluster",
        arguments: Fleet.RedisBackend.allCases)
    func loadgenThroughTwoWorkers(backend: Fleet.RedisBackend) async throws {
        let fleet = try await Fleet(backend: backend)
        try await fleet.startWorker()
        try await fleet.startWorker()
        let loadgen = try RunningProcess(
            "loadgen",
            [
                "loadgen", "--brokers", fleet.bootstrap, "--viewers", "150", "--join-rate", "300",
                "--streams", "2", "--periods", "4", "--rotations", "2", "--rotation-interval", "0.5", "--json",
            ])
        let report = try await Self.report(loadgen)
        #expect(report["all_correct"] as? Bool == true, "\(report) \(loadgen.stderr.suffix(2000))")
        #expect(report["sent"] as? Int == 450)
        #expect(report["correct"] as? Int == 450)
        // Both workers did work: the group split the partitions.
        for worker in fleet.workers { #expect(await worker.terminate() == 0, "\(worker.stderr.suffix(2000))") }
        #expect(fleet.workers.allSatisfy { $0.stderr.contains("partitions assigned") })
        // The binary links jemalloc and jemalloc serves its allocations (a Swift array showed up in
        // jemalloc's counter): the allocator the performance figures were measured on.
        #expect(fleet.workers.allSatisfy { $0.stderr.contains("allocator=jemalloc 5.") }, "\(fleet.workers.map { $0.stderr.prefix(600) })")
    }

    @Test("A key-encryption key given as KSM_KEKS in the environment serves jobs; a malformed one stops the worker with a clear error")
    func keyEncryptionKeyFromEnvironment() async throws {
        let fleet = try await Fleet()
        let kekHex = try String(contentsOfFile: fleet.kekPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let bad = try await fleet.startWorker(waitForAssignment: false, environment: ["KSM_KEKS": "demo-kek=abcd"], kekFromFile: false)
        // The worker stops by itself while reading its keys, before it touches Kafka.
        let exited = ContinuousClock.now + .seconds(20)
        while bad.isRunning, ContinuousClock.now < exited { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!bad.isRunning)
        #expect(await bad.terminate() != 0)
        #expect(bad.stderr.contains("KSM_KEKS entry 1 of 1: the key is not 16 or 32 bytes of hex"), "\(bad.stderr.suffix(500))")
        #expect(!bad.stderr.contains("abcd"))
        try await fleet.startWorker(environment: ["KSM_KEKS": "demo-kek=\(kekHex)"], kekFromFile: false)
        let client = try await FleetClient(fleet: fleet)
        let device = SimulatedDevice(trust: client.trust)
        let (reply, session) = try await client.request(id: "env-kek-1", account: "env", device: device, session: 7)
        #expect(reply.status == .ok, "\(reply.reason)")
        let ckc = try #require(reply.ckc)
        #expect(try CKCOpener.open(ckc, session: session).contentKey == fleet.catalog.contentKey(assetID: fleet.catalog.assetID(stream: 0, period: 0)))
        await client.close()
    }

    @Test(
        "The per-account stream limit holds, a renewal extends the slot, and expiry frees it, on one Redis or a Redis Cluster",
        arguments: Fleet.RedisBackend.allCases)
    func streamLimitRenewalAndExpiry(backend: Fleet.RedisBackend) async throws {
        // Leases far longer than any stall of a slow, shared CI host, so no slot lapses by itself
        // between two requests (3 s, then 8 s, were not always enough); B's lapse is made by hand below.
        let fleet = try await Fleet(maxStreams: 2, leaseSeconds: 120, backend: backend)
        try await fleet.startWorker()
        let client = try await FleetClient(fleet: fleet)
        let a = SimulatedDevice(trust: client.trust)
        let b = SimulatedDevice(trust: client.trust)
        let c = SimulatedDevice(trust: client.trust)

        let (first, sessionA) = try await client.request(id: "lim-a1", account: "family", device: a, session: 1)
        #expect(first.status == .ok, "\(first.reason)")
        let key = try CKCOpener.open(try #require(first.ckc), session: sessionA)
        #expect(key.contentKey == fleet.catalog.contentKey(assetID: fleet.catalog.assetID(stream: 0, period: 0)))
        #expect(key.keyDuration?.keyType == .lease)
        let (second, _) = try await client.request(id: "lim-b1", account: "family", device: b, session: 2)
        #expect(second.status == .ok, "\(second.reason)")
        let (third, _) = try await client.request(id: "lim-c1", account: "family", device: c, session: 3)
        #expect(third.status == .tooManyStreams)
        #expect(third.reason.contains("2"), "\(third.reason)")
        #expect(third.ckc == nil)

        // A renewal (playback state 3) of the same session keeps the slot and moves its expiry.
        try await Task.sleep(for: .milliseconds(1100))
        let (renewal, renewedSession) = try await client.request(id: "lim-a2", account: "family", device: a, session: 1, state: .leaseRenewal)
        #expect(renewal.status == .ok, "\(renewal.reason)")
        #expect(
            (renewal.leaseExpiresAt ?? 0) > (first.leaseExpiresAt ?? .max),
            "renewed \(String(describing: renewal.leaseExpiresAt)) first \(String(describing: first.leaseExpiresAt))")
        #expect(try CKCOpener.open(try #require(renewal.ckc), session: renewedSession).keyDuration?.keyType == .lease)

        // A redelivered job (same ID) gets the same answer and takes nothing more.
        let (again, _) = try await client.request(id: "lim-c1", account: "family", device: c, session: 3)
        #expect(again.status == .tooManyStreams)

        // B's slot expires (never renewed; its expiry moved into the past in Redis) and frees room for C.
        let store = try fleet.store()
        let now = LicenseProcessor.currentTimeMilliseconds()
        #expect(try await store.listSlots(tenant: try StoreIdentifier("demo"), account: try StoreIdentifier("family"), nowMilliseconds: now).count == 2)
        let (stillFull, _) = try await client.request(id: "lim-c2", account: "family", device: c, session: 3)
        #expect(stillFull.status == .tooManyStreams, "\(stillFull.reason)")
        try await fleet.expireSlot(tenant: "demo", account: "family", sessionID: 2)
        let left = try await store.listSlots(
            tenant: try StoreIdentifier("demo"), account: try StoreIdentifier("family"), nowMilliseconds: LicenseProcessor.currentTimeMilliseconds())
        #expect(left.map(\.sessionID) == [1], "only A's slot is live")
        let (fourth, _) = try await client.request(id: "lim-c3", account: "family", device: c, session: 3)
        #expect(fourth.status == .ok, "\(fourth.reason)")
        await client.close()
    }

    @Test("A message that is not a job goes to the dead-letter topic; a bad job gets an invalidJob reply")
    func deadLettersAndInvalidJobs() async throws {
        let fleet = try await Fleet()
        try await fleet.startWorker()
        let client = try await FleetClient(fleet: fleet, topics: ["fps.license.replies", "fps.license.dlq"])
        try await client.sendRaw(Array("this is not json".utf8), headers: [("correlation-id", Array("garbage-1".utf8))])
        try await client.sendRaw(Array(#"{"id":"bad-1","tenant":"demo","account":"a","spc":"%%%"}"#.utf8))
        let bad = try await client.reply("bad-1")
        #expect(bad.status == .invalidJob)
        #expect(bad.reason.contains("spc"), "\(bad.reason)")
        let deadline = ContinuousClock.now + .seconds(20)
        while client.messages(on: "fps.license.dlq").isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let dead = try #require(client.messages(on: "fps.license.dlq").first)
        #expect(dead.value == Array("this is not json".utf8))
        #expect(dead.header("dlq-reason").map { String(decoding: $0, as: UTF8.self) }?.contains("JSON") == true)
        #expect(dead.header("correlation-id") == Array("garbage-1".utf8))
        await client.close()
    }

    @Test("The admin port answers /healthz, /readyz (partitions and Redis) and Prometheus /metrics")
    func adminPort() async throws {
        let fleet = try await Fleet()
        let port = try RedisServerProcess.freeLoopbackPort()
        try await fleet.startWorker(extraArguments: ["--admin-port", "\(port)", "--slot-count-interval", "0.5"])
        let client = try await FleetClient(fleet: fleet)
        let (reply, _) = try await client.request(id: "admin-1", account: "a1", device: SimulatedDevice(trust: client.trust), session: 1)
        #expect(reply.status == .ok)
        func get(_ path: String) async throws -> (Int, String) {
            let (data, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)\(path)")!)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
        }
        #expect(try await get("/healthz").0 == 200)
        // Ready needs a partition and a Redis health check that answered (every 2 s).
        var ready = try await get("/readyz")
        let deadline = ContinuousClock.now + .seconds(10)
        while ready.0 != 200, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            ready = try await get("/readyz")
        }
        #expect(ready.0 == 200, "\(ready.1)")
        let metrics = try await get("/metrics")
        #expect(metrics.1.contains("ksm_replies_total{status=\"noErr\"} 1"), "\(metrics.1)")
        #expect(metrics.1.contains("ksm_store_up 1.0"))
        let tenant = fleet.catalog.tenant
        #expect(metrics.1.contains("ksm_replies_by_tenant_total{status=\"noErr\",tenant=\"\(tenant)\",class=\"new\"} 1"), "\(metrics.1)")
        #expect(metrics.1.contains("ksm_job_latency_seconds_count{class=\"new\"} 1"))
        #expect(metrics.1.contains("ksm_job_latency_seconds_bucket{class=\"new\",le=\"+Inf\"} 1"))
        #expect(metrics.1.contains("ksm_batch_processing_seconds_count{class=\"new\"} 1"))
        #expect(metrics.1.contains("ksm_jobs_queued{class=\"continuity\"} 0.0"))
        #expect(metrics.1.contains("ksm_jobs_processing{class=\"new\"} 0.0"))
        #expect(metrics.1.contains("ksm_cache_reads_total{result=\"miss\"} 1"), "\(metrics.1)")
        #expect(metrics.1.contains("ksm_kafka_errors_total{source=\"producer\",kind=\"message_too_large\"} 0"))
        // A second job for the same asset is a cache hit, and the counters move.
        let (again, _) = try await client.request(id: "admin-2", account: "a2", device: SimulatedDevice(trust: client.trust), session: 2)
        #expect(again.status == .ok)
        let moved = try await get("/metrics").1
        #expect(moved.contains("ksm_replies_by_tenant_total{status=\"noErr\",tenant=\"\(tenant)\",class=\"new\"} 2"), "\(moved)")
        #expect(moved.contains("ksm_job_latency_seconds_count{class=\"new\"} 2"))
        // The first read may have expired (2 s TTL) while /readyz was polled: hit or miss, two reads in all.
        func value(_ series: String, _ text: String) -> Int {
            text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Int($0.split(separator: " ")[1]) } ?? -1
        }
        #expect(["hit", "miss", "join"].map { value("ksm_cache_reads_total{result=\"\($0)\"}", moved) }.reduce(0, +) == 2, "\(moved)")
        // Lag (sampled every 2 s) and the slot count (every 0.5 s here) arrive on their own schedule.
        func scrapeUntil(_ condition: (String) -> Bool) async throws -> String {
            let deadline = ContinuousClock.now + .seconds(10)
            var text = try await get("/metrics").1
            while !condition(text), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
                text = try await get("/metrics").1
            }
            return text
        }
        let sampled = try await scrapeUntil {
            $0.contains("ksm_consumer_lag{topic=\"fps.license.requests\",partition=\"") && $0.contains("ksm_lease_slots_in_use 2.0")
        }
        #expect(sampled.contains("ksm_consumer_lag{topic=\"fps.license.requests\",partition=\"0\"} 0.0"), "\(sampled)")
        #expect(sampled.contains("ksm_lease_slots_in_use 2.0"), "\(sampled)")
        #expect(sampled.contains("ksm_lease_slots_count_complete 1.0"))
        #expect(try await get("/nope").0 == 404)
        // A real scrape passes Prometheus's own linter; the build and process series are there.
        #expect(sampled.contains("ksm_build_info{version=\""))
        #expect(sampled.contains("\nprocess_resident_memory_bytes "))
        let lint = try await Promtool.checkMetrics(sampled)
        #expect(lint.status == 0, "promtool check metrics: \(lint.output)")
        // Redis gone: not ready (fail closed), still alive.
        fleet.redis.stop()
        var notReady = try await get("/readyz")
        let later = ContinuousClock.now + .seconds(10)
        while notReady.0 == 200, ContinuousClock.now < later {
            try await Task.sleep(for: .milliseconds(200))
            notReady = try await get("/readyz")
        }
        #expect(notReady.0 == 503)
        #expect(notReady.1.contains("redis"))
        let down = try await get("/metrics").1
        #expect(down.contains("ksm_store_up 0.0"))
        #expect(down.contains("ksm_store_errors_total{operation=\"ping\""), "\(down)")
        #expect(try await get("/healthz").0 == 200)
        await client.close()
    }

    @Test("No key material reaches the output of a worker logging at trace level", arguments: ["text", "json"])
    func noSecretsInLogs(format: String) async throws {
        let fleet = try await Fleet()
        // A tenant with an entitlement token secret of its own and an asset that needs a token.
        let tokenSecret = FairPlayCrypto.randomBytes(32)
        let secretPath = try PolicyEndToEndTests.file(fleet, "token-secret.hex", HexEncoding.encode(tokenSecret) + "\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretPath)
        try await PolicyEndToEndTests.admin([
            "put-tenant", "--redis-url", fleet.redisURL, "--tenant", "sec", "--credentials",
            try KSMBinary.privateCredentials("Fixtures/test-credentials/certificates.json"),
            "--kek-id", "demo-kek", "--kek", "demo-kek=\(fleet.kekPath)", "--token-secret", "k1=\(secretPath)",
        ])
        let premium = "skd://sec/premium"
        let premiumKey = FairPlayCrypto.randomBytes(16)
        try await PolicyEndToEndTests.admin([
            "put-key", "--redis-url", fleet.redisURL, "--tenant", "sec", "--asset", premium, "--key", HexEncoding.encode(premiumKey),
            "--iv", HexEncoding.encode(FairPlayCrypto.randomBytes(16)), "--kek", "demo-kek=\(fleet.kekPath)",
        ])
        try await PolicyEndToEndTests.admin([
            "put-policy", "--redis-url", fleet.redisURL, "--tenant", "sec",
            try PolicyEndToEndTests.file(fleet, "sec.json", #"{"content-type": "hd", "entitlement-required": true}"#),
        ])
        let worker = try await fleet.startWorker(extraArguments: ["--log-level", "trace", "--log-format", format])
        let client = try await FleetClient(fleet: fleet)
        let device = SimulatedDevice(trust: client.trust)
        let (reply, session) = try await client.request(id: "secret-1", account: "s1", device: device, session: 9)
        #expect(reply.status == .ok)
        let (refused, _) = try await client.request(id: "secret-2", account: "s1", device: device, session: 9, stream: 0, period: 99)
        #expect(refused.status == .noContentKey)
        // Error paths: a good and a forged token (the secret is unwrapped for both), then the store gone.
        func tokenJob(_ id: String, secret: [UInt8]) async throws -> LicenseReply {
            var options = SPCOptions()
            options.assetID = Array(premium.utf8)
            options.playback = MediaPlaybackInfo(creationDate: UInt32(Date().timeIntervalSince1970), state: .readyToPlay, sessionID: 11)
            let now = LicenseProcessor.currentTimeMilliseconds() / 1000
            let token = EntitlementToken.sign(EntitlementClaims(subject: "s2", asset: premium, expiresAt: now + 600), keyID: "k1", secret: secret)
            let job = LicenseJob(
                id: try StoreIdentifier(id), tenant: try StoreIdentifier("sec"), account: try StoreIdentifier("s2"),
                spc: try device.makeSPC(options).spc, entitlement: token)
            try await client.sendRaw(job.jsonBytes(), key: "s2", headers: [("correlation-id", Array(id.utf8))])
            return try await client.reply(id)
        }
        #expect(try await tokenJob("secret-tok-ok", secret: tokenSecret).status == .ok)
        #expect(try await tokenJob("secret-tok-bad", secret: FairPlayCrypto.randomBytes(32)).status == .tokenBadSignature)
        fleet.redis.stop()
        let (down, _) = try await client.request(id: "secret-3", account: "s3", device: device, session: 12, timeout: .seconds(60))
        #expect(down.status == .storeUnavailable, "\(down.status) \(down.reason)")
        #expect(await worker.terminate() == 0)
        let output = worker.stderr + worker.lines.joined(separator: "\n")
        #expect(output.contains("secret-1"), "the worker logged nothing at trace level")
        let root = KSMBinary.packageRoot.appendingPathComponent("Fixtures/test-credentials")
        let asset = fleet.catalog.assetID(stream: 0, period: 0)
        let kekHex = try String(contentsOf: URL(fileURLWithPath: fleet.kekPath), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        var secrets: [String: String] = [
            "Redis password": fleet.redis.password,
            "token secret": tokenSecret.hexString,
            "token secret (base64)": Data(tokenSecret).base64EncodedString(),
            "KEK (base64)": Data([UInt8](hexString: kekHex) ?? []).base64EncodedString(),
            "premium content key": premiumKey.hexString,
            "content key": fleet.catalog.contentKey(assetID: asset).hexString,
            "key-encryption key": try String(contentsOf: URL(fileURLWithPath: fleet.kekPath), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
            "ASk": try String(contentsOf: root.appendingPathComponent("test_ask.hex"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
            "session key": session.sessionKey.hexString,
            "R1": session.r1.hexString,
            "CKC": Data(try #require(reply.ckc)).base64EncodedString(),
        ]
        // Every line of the private keys' base64 body.
        for file in ["test_private_key_1024.pem", "test_private_key_2048.pem"] {
            let pem = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for (n, line) in pem.split(separator: "\n").enumerated() where !line.hasPrefix("-----") { secrets["\(file) line \(n)"] = String(line) }
        }
        for (name, value) in secrets {
            for form in [value.lowercased(), value.uppercased(), value] {
                #expect(!output.contains(form), "\(name) appears in the worker's output")
            }
        }
        await client.close()
    }

    /// Waits for a `--json` loadgen to exit and parses its report.
    static func report(_ loadgen: RunningProcess, timeout: Duration = .seconds(90)) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + timeout
        while loadgen.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        if loadgen.isRunning { loadgen.kill() }
        let text = loadgen.lines.joined(separator: "\n")
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw ProcessFailure(description: "loadgen printed no report; stdout: \(text.suffix(1000)) stderr: \(loadgen.stderr.suffix(2000))")
        }
        return object
    }
}
