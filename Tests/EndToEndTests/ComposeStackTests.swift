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

/// deploy/docker-compose.yml run as it ships, without Docker (CI has no engine): every `ksm` service
/// of the file started as a plain process of the real binary with exactly the file's command and
/// environment, read from the YAML, `kafka-init`'s `ksm admin create-topics` included. Substituted,
/// and only these: the host names `kafka` and `redis` (librdkafka's mock cluster via `ksm broker`
/// stands in for `kafka`, with the topics made already, since the mock creates none on request; a
/// redis-server of the test's own for `redis`), each volume's mount point (a directory per container path: bind
/// sources copied with the 0644 modes git gives them, named volumes shared), the workers' admin
/// ports, the key provider's and the edge's port (they share one host here), and loadgen's length (a
/// shorter run appended to its arguments).
@Suite(.serialized, .timeLimit(.minutes(4)))
struct ComposeStackTests {
    static func compose() async throws -> [String: Any] {
        try #require(try await DeployFiles.yaml("deploy/docker-compose.yml").first as? [String: Any])
    }

    /// One compose service as this machine runs it.
    struct Service {
        var name: String
        var entrypoint: [String]?
        var command: [String]
        var environment: [String: String]
        /// Container path -> (source, bind or named volume).
        var volumes: [(target: String, source: String, bind: Bool)]

        init(_ name: String, _ json: [String: Any]) throws {
            self.name = name
            entrypoint = json["entrypoint"] as? [String]
            command = (json["command"] as? [String]) ?? (json["command"] as? String).map { $0.split(separator: " ").map(String.init) } ?? []
            var env: [String: String] = [:]
            for (key, value) in json["environment"] as? [String: Any] ?? [:] { env[key] = "\(value)" }
            environment = env
            volumes = (json["volumes"] as? [[String: Any]] ?? []).compactMap { v in
                guard let target = v["target"] as? String, let source = v["source"] as? String else { return nil }
                return (target, source, (v["type"] as? String) == "bind")
            }
        }
    }

    /// Rewrites host names and container paths in one argument or variable, and undoes compose's `$$`.
    struct Rewrite {
        var bootstrap: String
        var redisURL: String
        var root: URL

        func callAsFunction(_ text: String) -> String {
            var out = text.replacingOccurrences(of: "$$", with: "$")
            out = out.replacingOccurrences(of: "redis://redis:6379/0", with: redisURL)
            out = out.replacingOccurrences(of: "kafka:9092", with: bootstrap)
            for prefix in ["/etc/ksm/", "/var/lib/ksm"] {
                out = out.replacingOccurrences(of: prefix, with: root.path + prefix)
            }
            return out
        }
    }

    @Test("The compose stack's ksm services run as shipped: topics, setup, three workers ready, loadgen's every CKC correct")
    func composeStackRunsAsShipped() async throws {
        let compose = try await Self.compose()
        let services = try (compose["services"] as? [String: [String: Any]] ?? [:]).mapValues { $0 }.map { try Service($0.key, $0.value) }
        func service(_ name: String) throws -> Service { try #require(services.first { $0.name == name }, "no service \(name)") }

        let redis = try await RedisServerProcess()
        defer { redis.stop() }
        let broker = try RunningProcess("broker", ["broker", "--partitions", "12"], controlInput: true)
        let bootstrap = try await broker.firstLine()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-compose-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let rewrite = Rewrite(bootstrap: bootstrap, redisURL: redis.url, root: root)

        try Self.mount(services, rewrite)

        // kafka-init: `ksm admin create-topics` finds the workers' topics (named by the shared environment).
        let topics = try service("kafka-init")
        #expect(Array(topics.command.prefix(2)) == ["admin", "create-topics"])
        let topicsRun = try await KSMBinary.run(topics.command.map(rewrite.callAsFunction), environment: topics.environment.mapValues(rewrite.callAsFunction))
        let topicsOutput = String(decoding: topicsRun.stdout, as: UTF8.self)
        #expect(topicsRun.status == 0, "kafka-init failed: \(String(decoding: topicsRun.stderr, as: UTF8.self))")
        for key in ["KSM_REQUESTS_TOPIC", "KSM_REPLIES_TOPIC", "KSM_DLQ_TOPIC"] {
            let topic = try #require(topics.environment[key])
            #expect(topicsOutput.contains("\(topic): exists"), "\(topic): \(topicsOutput)")
        }

        try await Self.runSetup(try service("ksm-setup"), rewrite)

        // The workers, each on an admin port of its own (compose gives each its own network).
        var workers: [(RunningProcess, Int)] = []
        for name in services.map(\.name).sorted() where try service(name).command.first == "serve" {
            let worker = try service(name)
            var environment = worker.environment.mapValues(rewrite.callAsFunction)
            let port = try RedisServerProcess.freeLoopbackPort()
            environment["KSM_ADMIN_PORT"] = "\(port)"
            let process = try RunningProcess(name, worker.command.map(rewrite.callAsFunction), environment: environment)
            process.adminPort = port
            workers.append((process, port))
        }
        #expect(workers.count == 3)
        for (worker, port) in workers {
            let ready = try await DeployFiles.waitForReady(port: port)
            #expect(ready, "\(worker.name) never became ready: \(worker.stderr.suffix(3000))")
        }
        // Ready is one member's view; loadgen starts once the group owns all 12 partitions (a worker
        // started late on a loaded host is a second rebalance, which the mock spaces by the session timeout).
        try await RunningProcess.waitUntilSettled(workers.map(\.0), partitions: 12, timeout: .seconds(90))

        // loadgen with the file's arguments, a shorter run appended (later options win).
        let loadgen = try service("loadgen")
        let run = try RunningProcess(
            "loadgen", loadgen.command.map(rewrite.callAsFunction) + ["--viewers", "300", "--rotations", "1", "--rotation-interval", "2", "--json"],
            environment: loadgen.environment.mapValues(rewrite.callAsFunction))
        let deadline = ContinuousClock.now + .seconds(120)
        while run.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(200)) }
        #expect(!run.isRunning && run.exitStatus?.succeeded == true, "loadgen: \(run.stderr.suffix(3000))")
        let report = try JSONSerialization.jsonObject(with: Data(run.lines.joined(separator: "\n").utf8)) as? [String: Any]
        // 300 joins and one rotation of all 300: every reply correct.
        #expect(report?["all_correct"] as? Bool == true && (report?["correct"] as? Int ?? 0) >= 600, "\(String(describing: report))")
        for (worker, _) in workers { _ = await worker.terminate() }
    }
}

extension ComposeStackTests {
    /// The mounts: bind sources copied at git's modes; named volumes one directory each.
    static func mount(_ services: [Service], _ rewrite: Rewrite) throws {
        for volume in services.flatMap(\.volumes) where !FileManager.default.fileExists(atPath: rewrite(volume.target)) {
            let target = URL(fileURLWithPath: rewrite(volume.target))
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            if volume.bind {
                let source = KSMBinary.packageRoot.appendingPathComponent("deploy").appendingPathComponent(volume.source).standardizedFileURL
                try FileManager.default.copyItem(at: source, to: target)
                for name in try FileManager.default.contentsOfDirectory(atPath: target.path) {
                    try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.appendingPathComponent(name).path)
                }
            } else {
                try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            }
        }
    }

    /// An HTTP service of the file (`speke`, `edge`) started with the file's command and environment,
    /// only its listening port this host's; ready by its `/readyz`, then healthy by the healthcheck
    /// compose runs in its container. Checks the command is `ksm <name>` and the port published on
    /// the host (`publishedPort`) maps to the one it listens on. Returns the process, the host port
    /// and the environment it was given.
    static func startHTTPService(
        _ service: Service, json: [String: Any], publishedPort: Int, _ rewrite: Rewrite
    ) async throws -> (process: RunningProcess, port: Int, environment: [String: String]) {
        #expect(service.command == [service.name])
        let key = "KSM_\(service.name.uppercased())_LISTEN"
        var environment = service.environment.mapValues(rewrite.callAsFunction)
        let listen = try #require(environment[key], "\(service.name) sets no \(key)")
        let containerPort = try #require(listen.split(separator: ":").last.map(String.init))
        #expect((json["ports"] as? [String]) == ["127.0.0.1:\(publishedPort):\(containerPort)"], "the published port is the one it listens on")
        let port = try RedisServerProcess.freeLoopbackPort()
        environment[key] = "127.0.0.1:\(port)"
        let process = try RunningProcess("compose-\(service.name)", service.command.map(rewrite.callAsFunction), environment: environment)
        do {
            let ready = try await DeployFiles.waitForReady(port: port) { process.isRunning }
            try #require(ready, "\(service.name) never became ready: \(process.stderr.suffix(3000))")

            // The healthcheck compose runs in the container, against this host's port.
            let test = try #require((json["healthcheck"] as? [String: Any])?["test"] as? [String])
            #expect(test.first == "CMD" && test.count > 2)
            let check = try await ProcessRunner.run(
                URL(fileURLWithPath: test[1]), test.dropFirst(2).map { $0.replacingOccurrences(of: "/\(containerPort)", with: "/\(port)") },
                timeout: .seconds(30))
            #expect(check.succeeded, "the healthcheck failed: \(check.stderrText)")
        } catch {
            process.kill()
            throw error
        }
        return (process, port, environment)
    }

    /// ksm-setup: its entrypoint and script, with `ksm` on the PATH as in the image.
    static func runSetup(_ setup: Service, _ rewrite: Rewrite) async throws {
        let entry = try #require(setup.entrypoint)
        var setupEnvironment = setup.environment.mapValues(rewrite.callAsFunction)
        setupEnvironment["PATH"] = KSMBinary.url.deletingLastPathComponent().path + ":/usr/bin:/bin"
        let setupRun = try await ProcessRunner.run(
            URL(fileURLWithPath: entry[0]), Array(entry.dropFirst()) + setup.command.map(rewrite.callAsFunction),
            environment: setupEnvironment, timeout: .seconds(120))
        #expect(setupRun.succeeded, "ksm-setup failed: \(setupRun.stderrText)")
    }

    @Test("The compose file's speke service, run as shipped after ksm-setup, is healthy by its own healthcheck and answers a packager")
    func spekeServiceRunsAsShipped() async throws {
        let compose = try await Self.compose()
        let services = try (compose["services"] as? [String: [String: Any]] ?? [:]).map { try Service($0.key, $0.value) }
        func service(_ name: String) throws -> Service { try #require(services.first { $0.name == name }, "no service \(name)") }
        let json = try #require((compose["services"] as? [String: [String: Any]])?["speke"], "no service speke")

        let redis = try await RedisServerProcess()
        defer { redis.stop() }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-compose-speke-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        // No Kafka: the key provider and setup never talk to it.
        let rewrite = Rewrite(bootstrap: "127.0.0.1:9", redisURL: redis.url, root: root)
        try Self.mount(services, rewrite)
        try await Self.runSetup(try service("ksm-setup"), rewrite)

        let (process, port, _) = try await Self.startHTTPService(try service("speke"), json: json, publishedPort: 18080, rewrite)
        defer { process.kill() }

        // A packager credential as the ksm-admin service makes one, then the AWS request answered.
        let admin = try service("ksm-admin")
        let created = try await KSMBinary.run(
            ["admin", "put-packager-credential", "--tenant", "demo", "--id", "packager"], environment: admin.environment.mapValues(rewrite.callAsFunction))
        #expect(created.status == 0, "\(String(decoding: created.stderr, as: UTF8.self))")
        let token = try #require(String(decoding: created.stdout, as: UTF8.self).split(separator: "\n").last.map(String.init))
        let answer = try await HTTPExchange.post(
            "http://127.0.0.1:\(port)/speke/v2/demo/copyProtection", body: Array(SpekeServiceTests.fairPlayRequest.utf8),
            headers: ["Authorization": "Bearer \(token)", "X-Speke-Version": "2.0"])
        #expect(answer.status == 200, "\(answer.text)")
        #expect(try SpekeServiceTests.fairPlayKeys(answer.body).count == 2)
        #expect(process.stderr.contains("\"scheme\":\"http\""), "JSON logs, plain HTTP: \(process.stderr.suffix(1000))")
        #expect(await process.terminate() == 0)
    }

    @Test(
        "The compose file's edge service, run as shipped after kafka-init, ksm-setup and a worker, is healthy by its own healthcheck, serves the certificate and a device's SPC gets a CKC that opens"
    )
    func edgeServiceRunsAsShipped() async throws {
        let compose = try await Self.compose()
        let services = try (compose["services"] as? [String: [String: Any]] ?? [:]).map { try Service($0.key, $0.value) }
        func service(_ name: String) throws -> Service { try #require(services.first { $0.name == name }, "no service \(name)") }
        let json = try #require((compose["services"] as? [String: [String: Any]])?["edge"], "no service edge")

        let redis = try await RedisServerProcess()
        defer { redis.stop() }
        let broker = try RunningProcess("broker", ["broker", "--partitions", "12"], controlInput: true)
        let bootstrap = try await broker.firstLine()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-compose-edge-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let rewrite = Rewrite(bootstrap: bootstrap, redisURL: redis.url, root: root)
        try Self.mount(services, rewrite)
        let topics = try service("kafka-init")
        let topicsRun = try await KSMBinary.run(topics.command.map(rewrite.callAsFunction), environment: topics.environment.mapValues(rewrite.callAsFunction))
        #expect(topicsRun.status == 0, "kafka-init failed: \(String(decoding: topicsRun.stderr, as: UTF8.self))")
        try await Self.runSetup(try service("ksm-setup"), rewrite)

        // One of the file's workers, on an admin port of this host's.
        let workerService = try service("ksm-worker-1")
        var workerEnvironment = workerService.environment.mapValues(rewrite.callAsFunction)
        let adminPort = try RedisServerProcess.freeLoopbackPort()
        workerEnvironment["KSM_ADMIN_PORT"] = "\(adminPort)"
        let worker = try RunningProcess("compose-worker", workerService.command.map(rewrite.callAsFunction), environment: workerEnvironment)
        defer { worker.kill() }
        let workerReady = try await DeployFiles.waitForReady(port: adminPort) { worker.isRunning }
        try #require(workerReady, "the worker never became ready: \(worker.stderr.suffix(3000))")

        let edgeService = try service("edge")
        for key in ["KSM_KAFKA_BROKERS", "KSM_REQUESTS_TOPIC", "KSM_REDIS_URL"] {
            #expect(edgeService.environment[key] == workerService.environment[key], "\(key): the edge's and the workers' differ")
        }
        let (edge, port, environment) = try await Self.startHTTPService(edgeService, json: json, publishedPort: 18081, rewrite)
        defer { edge.kill() }
        let replyTopic = "fps.license.replies.edge.\(try #require(environment["KSM_EDGE_INSTANCE_ID"]))"
        let readiness = try await HTTPExchange.get("http://127.0.0.1:\(port)/readyz")
        #expect(readiness.text.contains("reply topic \(replyTopic) assigned"), "\(readiness.text)")

        // A device of the seeded catalogue (ksm-setup's seed-demo) asks, raw and as JSON; each CKC
        // opens on the device to the catalogue's key.
        let catalog = DemoCatalog(streams: 4, periods: 4)
        let client = try await FleetClient(bootstrap: bootstrap, catalog: catalog)
        let device = SimulatedDevice(trust: client.trust)
        await client.close()
        let asset = catalog.assetID(stream: 1, period: 2)
        let url = "http://127.0.0.1:\(port)/fps/\(catalog.tenant)/license"
        for (index, shape) in ["raw", "json"].enumerated() {
            var options = SPCOptions()
            options.assetID = Array(asset.utf8)
            options.playback = MediaPlaybackInfo(
                creationDate: UInt32(Date().timeIntervalSince1970), state: .readyToPlay, sessionID: UInt64(index + 1))
            let (spc, session) = try device.makeSPC(options)
            let answer: HTTPExchange
            let ckc: [UInt8]
            if shape == "raw" {
                answer = try await HTTPExchange.post(url, body: spc, headers: ["Content-Type": "application/octet-stream", "X-Account": "compose-viewer"])
                ckc = answer.body
            } else {
                let body = "{\"spc\":\"\(Base64.encode(spc))\",\"asset-id\":\"\(asset)\"}"
                answer = try await HTTPExchange.post(
                    url, body: Array(body.utf8), headers: ["Content-Type": "application/json", "X-Account": "compose-viewer"])
                guard case .object(let object)? = try? JSONValue(parsing: answer.body), case .string(let text)? = object["ckc"] else {
                    Issue.record("json: \(answer.status) \(answer.text)")
                    continue
                }
                ckc = try #require(Base64.decode(Array(text.utf8)))
            }
            #expect(answer.status == 200, "\(shape): \(answer.text) \(edge.stderr.suffix(2000))")
            guard answer.status == 200 else { continue }
            let opened = try CKCOpener.open(ckc, session: session)
            #expect(opened.contentKey == catalog.contentKey(assetID: asset), "\(shape)")
        }
        // The certificate a player fetches first: the one ksm-setup stored, the one the SPCs were made for.
        let certificate = try await HTTPExchange.get("http://127.0.0.1:\(port)/fps/\(catalog.tenant)/certificate")
        #expect(certificate.status == 200, "\(certificate.text)")
        #expect(certificate.headers["content-type"] == "application/pkix-cert")
        let fixture = KSMBinary.packageRoot.appendingPathComponent("Fixtures/test-credentials/test_certificate.der")
        #expect(certificate.body == Array(try Data(contentsOf: fixture)), "the edge serves the certificate ksm-setup stored")
        let metrics = try await HTTPExchange.get("http://127.0.0.1:\(port)/metrics")
        #expect(metrics.text.contains("outcome=\"answered\"} 1"), "\(metrics.text.suffix(3000))")
        #expect(edge.stderr.contains("\"reply_topic\":\"\(replyTopic)\""), "JSON logs name the reply topic: \(edge.stderr.suffix(1000))")
        #expect(await edge.terminate() == 0)
        #expect(await worker.terminate() == 0)
    }

    @Test("ksm loadgen against a broker that is not there fails within its connect timeout, saying so")
    func loadgenWithoutBrokerFailsClearly() async throws {
        let nothing = try RefusingLoopbackPort()
        defer { withExtendedLifetime(nothing) {} }
        let port = nothing.port
        let began = ContinuousClock.now
        let result = try await KSMBinary.run(["loadgen", "--brokers", "127.0.0.1:\(port)", "--viewers", "1", "--connect-timeout", "2"])
        let stderr = String(decoding: result.stderr, as: UTF8.self)
        #expect(result.status != 0)
        #expect(ContinuousClock.now - began < .seconds(20))
        #expect(stderr.contains("ksm loadgen: error: Cannot reach Kafka at 127.0.0.1:\(port)"), "\(stderr.suffix(2000))")
        #expect(!stderr.contains("USAGE"), "a runtime error prints no usage text")
    }
}
