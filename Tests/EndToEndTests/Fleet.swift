import FairPlay
import FairPlayDevice
import Foundation
import KSMLoad
import KSMService
import KSMTestSupport
import Kafka
import Licensing
import Wire

@testable import RedisStore

/// A real fleet on loopback: redis-server, `ksm broker`, the demo catalogue seeded with `ksm admin`,
/// and `ksm serve` workers, all separate processes of the real binary.
final class Fleet: @unchecked Sendable {
    // @unchecked: used by one test at a time; `workers` is only changed by that test.
    /// What the store runs on: one redis-server, or a six-node Redis Cluster (`redis-cluster://`).
    enum RedisBackend: String, CaseIterable, Sendable {
        case single, cluster
    }

    private let single: RedisServerProcess?
    let cluster: RedisClusterProcess?
    let broker: RunningProcess
    let bootstrap: String
    let directory: URL
    let catalog: DemoCatalog
    var workers: [RunningProcess] = []

    /// The single redis-server, for the tests of a single Redis's faults (restart, data loss).
    var redis: RedisServerProcess { single! }
    var redisURL: String { cluster?.url ?? redis.url }
    var kekPath: String { directory.appendingPathComponent("kek.hex").path }

    /// - Parameter durableRedis: Redis appends every write to a file in the fleet's directory and
    ///   fsyncs it (`appendfsync always`), so a killed and restarted server keeps its data and slots.
    /// - Parameter brokers: mock brokers in `ksm broker` (its topics are replicated on up to three,
    ///   leaders spread across them).
    init(
        maxStreams: Int = 2, leaseSeconds: UInt32 = 300, streams: Int = 2, periods: Int = 4, durableRedis: Bool = false,
        brokers: Int = 1, backend: RedisBackend = .single
    ) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-fleet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        switch backend {
        case .single:
            single = try await RedisServerProcess(
                extraArguments: durableRedis ? ["--dir", directory.path, "--appendonly", "yes", "--appendfsync", "always"] : [])
            cluster = nil
        case .cluster:
            single = nil
            cluster = try await RedisClusterProcess()
        }
        broker = try RunningProcess("broker", ["broker", "--partitions", "6", "--brokers", "\(brokers)"], controlInput: true)
        bootstrap = try await broker.firstLine()
        catalog = DemoCatalog(streams: streams, periods: periods, maxConcurrentStreams: maxStreams, leaseDurationSeconds: leaseSeconds)
        let seeded = try await KSMBinary.run([
            "admin", "seed-demo", "--redis-url", redisURL, "--kek-out", kekPath, "--max-streams", "\(maxStreams)",
            "--lease-duration", "\(leaseSeconds)", "--streams", "\(streams)", "--periods", "\(periods)",
        ])
        guard seeded.status == 0 else { throw ProcessFailure(description: "seed-demo failed: \(String(decoding: seeded.stderr, as: UTF8.self))") }
    }

    deinit {
        for worker in workers { worker.kill() }
        broker.kill()
        cluster?.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts one more `ksm serve`, with an admin port (the one in `extraArguments`, or a free one),
    /// and with `waitForAssignment` waits until its first assignment arrived (`/status`).
    /// `kekFromFile: false` leaves the KEK out of the arguments (the caller passes it another way).
    @discardableResult
    func startWorker(
        waitForAssignment: Bool = true, extraArguments: [String] = [], environment: [String: String] = [:],
        kekFromFile: Bool = true
    ) async throws -> RunningProcess {
        let given = extraArguments.firstIndex(of: "--admin-port").flatMap { Int(extraArguments[$0 + 1]) }
        let port = try given ?? RedisServerProcess.freeLoopbackPort()
        let worker = try RunningProcess(
            "worker-\(workers.count)",
            [
                "serve", "--brokers", bootstrap, "--redis-url", redisURL, "--credentials",
                try KSMBinary.privateCredentials("Fixtures/test-credentials/certificates.json"),
                "--kafka-property", "session.timeout.ms=6000", "--kafka-property", "heartbeat.interval.ms=300",
            ] + (kekFromFile ? ["--kek", "demo-kek=\(kekPath)"] : []) + (given == nil ? ["--admin-port", "\(port)"] : []) + extraArguments,
            environment: environment)
        worker.adminPort = port
        workers.append(worker)
        if waitForAssignment { try await worker.waitForStatus("a first assignment") { $0.partitionChanges >= 1 } }
        return worker
    }

    /// Waits until every running worker owns at least one partition and no assignment moved for
    /// 1.5 s: the cooperative rebalances after workers join or leave are over.
    func waitUntilBalanced(timeout: Duration = .seconds(30)) async throws {
        try await RunningProcess.waitUntilSettled(workers.filter(\.isRunning), timeout: timeout)
    }

    /// Sends one control command to `ksm broker` (see BrokerControl) and waits until it took effect.
    func brokerControl(_ command: String) async throws {
        let from = broker.lines.count
        try broker.send(line: command)
        let answer = try await broker.waitForLine(from: from) { $0.hasSuffix(command) || $0.hasPrefix("error \(command)") }
        guard answer.hasPrefix("ok ") else { throw ProcessFailure(description: "broker refused \(command): \(answer)") }
    }

    func store() throws -> RedisLicenseStore {
        RedisLicenseStore(client: try RedisEndpoint(url: redisURL).makeClient())
    }

    /// Ends a live lease slot now, as if its lease had run out: its expiry (the score in the
    /// account's slot ZSET) moves a second into the past. Tests grant long leases, so no slot lapses
    /// by itself while a stalled CI host is slow between two requests; this makes the lapse happen
    /// exactly where the test wants it. `ZADD XX CH` touches only an existing member and answers 1
    /// when it changed the score.
    func expireSlot(tenant: String, account: String, sessionID: UInt64) async throws {
        let store = try store()
        let (t, a) = (try StoreIdentifier(tenant), try StoreIdentifier(account))
        let now = LicenseProcessor.currentTimeMilliseconds()
        guard let slot = try await store.listSlots(tenant: t, account: a, nowMilliseconds: now).first(where: { $0.sessionID == sessionID }) else {
            throw ProcessFailure(description: "\(tenant)/\(account) holds no live slot of session \(sessionID)")
        }
        let member = LeaseSlot.member(deviceID: slot.deviceID, sessionID: slot.sessionID)
        let changed = try await store.client.send(["ZADD", RedisKeys.slots(t, account: a), "XX", "CH", RedisArgument(now - 1_000), RedisArgument(member)])
        guard changed == .integer(1) else { throw ProcessFailure(description: "ZADD XX CH of slot \(member) answered \(changed)") }
    }
}

/// Sends single jobs through Kafka and waits for their replies, as a platform edge would.
final class FleetClient: @unchecked Sendable {
    let producer: KafkaProducer
    let consumer: KafkaConsumer
    let trust: DeviceTrust
    let catalog: DemoCatalog
    private let lock = NSLock()
    private var replies: [String: LicenseReply] = [:]
    private var messages: [String: [KafkaMessage]] = [:]
    private var reader: Task<Void, Never>?

    convenience init(fleet: Fleet, topics: [String] = ["fps.license.replies"]) async throws {
        try await self.init(bootstrap: fleet.bootstrap, catalog: fleet.catalog, topics: topics)
    }

    init(bootstrap: String, catalog: DemoCatalog, topics: [String] = ["fps.license.replies"]) async throws {
        var p = KafkaProducer.Configuration(bootstrapServers: bootstrap)
        p.properties = ["linger.ms": "1"]
        producer = try KafkaProducer(configuration: p)
        var c = KafkaConsumer.Configuration(bootstrapServers: bootstrap, groupID: "test-client-\(UUID().uuidString)", topics: topics)
        c.properties = ["auto.offset.reset": "earliest", "fetch.wait.max.ms": "10", "session.timeout.ms": "6000"]
        consumer = try KafkaConsumer(configuration: c)
        let root = KSMBinary.packageRoot.appendingPathComponent("Fixtures/test-credentials")
        let ask = [UInt8](
            hexString: try String(contentsOf: root.appendingPathComponent("test_ask.hex"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))!
        trust = try DeviceTrust(
            certificateDER: Array(try Data(contentsOf: root.appendingPathComponent("test_certificate.der"))),
            publicKey2048: try RSAPublicKey(publicKeyPEMOrDER: Array(try Data(contentsOf: root.appendingPathComponent("test_public_key_2048.pem")))), ask: ask)
        self.catalog = catalog
        let consumer = self.consumer
        reader = Task { [weak self] in
            for await event in consumer.events {
                guard case .message(let message) = event else { continue }
                self?.record(message)
            }
        }
    }

    private func record(_ message: KafkaMessage) {
        lock.lock()
        defer { lock.unlock() }
        messages[message.topic, default: []].append(message)
        if let reply = try? LicenseReply(json: message.value) { replies[reply.id] = reply }
    }

    func close() async {
        await consumer.close()
        reader?.cancel()
        await producer.close()
    }

    /// Publishes raw bytes to the requests topic.
    func sendRaw(_ value: [UInt8], key: String = "k", headers: [(String, [UInt8])] = []) async throws {
        _ = try await producer.send(topic: "fps.license.requests", key: Array(key.utf8), value: value, headers: headers)
    }

    /// Sends a job for `device` and returns the reply and the device session that can open its CKC.
    func request(
        id: String, account: String, device: SimulatedDevice, session: UInt64, state: PlaybackState = .readyToPlay,
        stream: Int = 0, period: Int = 0, headers: [(String, [UInt8])] = [], timeout: Duration = .seconds(30)
    ) async throws -> (LicenseReply, DeviceSession) {
        var options = SPCOptions()
        options.assetID = Array(catalog.assetID(stream: stream, period: period).utf8)
        options.playback = MediaPlaybackInfo(creationDate: UInt32(Date().timeIntervalSince1970), state: state, sessionID: session)
        let (spc, deviceSession) = try device.makeSPC(options)
        let job = LicenseJob(id: try StoreIdentifier(id), tenant: try StoreIdentifier(catalog.tenant), account: try StoreIdentifier(account), spc: spc)
        try await sendRaw(job.jsonBytes(), key: account, headers: [("correlation-id", Array(id.utf8))] + headers)
        return (try await reply(id, timeout: timeout), deviceSession)
    }

    func reply(_ id: String, timeout: Duration = .seconds(30)) async throws -> LicenseReply {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let reply = lock.withLock({ replies[id] }) { return reply }
            // Checked once more after the deadline: a sleep that overran it cannot skip the last look.
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ProcessFailure(description: "no reply for \(id) within \(timeout)")
    }

    func messages(on topic: String) -> [KafkaMessage] { lock.withLock { messages[topic] ?? [] } }

    /// Drops the reply recorded for `id`, so the next ``reply(_:timeout:)`` waits for a new one (a
    /// job sent again after a retriable answer).
    func forget(_ id: String) { _ = lock.withLock { replies.removeValue(forKey: id) } }
}
