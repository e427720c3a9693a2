import FairPlay
import FairPlayDevice
import Foundation
import KSMLoad
import KSMOperations
import KSMService
import KSMTestSupport
import Licensing
import Testing
import Wire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `ksm edge` as a player meets it: the real binary on a free port in front of a real fleet (`ksm
/// broker`, redis-server, the demo catalogue, `ksm serve` workers), a simulated device's SPC POSTed
/// in each request shape and the CKC in the answer opened by the device; a retried request ID
/// answered with the same bytes and no second lease slot; no worker: 504 after the deadline; a
/// request in flight at SIGTERM answered before exit 0; `--check-config` redacted.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct EdgeServiceTests {
    @Test func aDeviceGetsACKCThatOpensInEveryShapeAndARetryGetsTheSameBytes() async throws {
        let fleet = try await Fleet(maxStreams: 2, streams: 1, periods: 1)
        let (edge, port) = try await Self.startEdge(fleet: fleet, deadlineSeconds: "1.5")
        defer { edge.kill() }
        let url = "http://127.0.0.1:\(port)/fps/\(fleet.catalog.tenant)/license"
        let client = try await FleetClient(fleet: fleet)
        defer { Task { await client.close() } }
        let device = SimulatedDevice(trust: client.trust)

        // No worker yet: the deadline passes and the answer is 504 with Retry-After.
        let (unanswered, _) = try Self.spc(fleet: fleet, device: device, session: 99)
        let started = ContinuousClock.now
        let timeout = try await HTTPExchange.post(url, body: unanswered, headers: ["Content-Type": "application/octet-stream", "X-Account": "late"])
        #expect(timeout.status == 504, "\(timeout.text)")
        #expect(Int(timeout.headers["retry-after"] ?? "") ?? 0 >= 1)
        #expect(ContinuousClock.now - started >= .milliseconds(1_500))

        try await fleet.startWorker()

        // Raw: the SPC's bytes in, the CKC's bytes out.
        let (spc, session) = try Self.spc(fleet: fleet, device: device, session: 1)
        let headers = ["Content-Type": "application/octet-stream", "X-Account": "viewer-1", "X-Request-ID": "edge-retry-1"]
        let first = try await HTTPExchange.post(url, body: spc, headers: headers)
        #expect(first.status == 200, "\(first.text)")
        #expect(first.headers["content-type"] == "application/octet-stream")
        let opened = try CKCOpener.open(first.body, session: session)
        #expect(opened.contentKey.count == 16)

        // The same request ID again (a player's retry): the same bytes, and still one lease slot.
        let again = try await HTTPExchange.post(url, body: spc, headers: headers)
        #expect(again.status == 200, "\(again.text)")
        #expect(again.body == first.body)
        let slots = try await fleet.store().listSlots(
            tenant: try StoreIdentifier(fleet.catalog.tenant), account: try StoreIdentifier("viewer-1"),
            nowMilliseconds: LicenseProcessor.currentTimeMilliseconds())
        #expect(slots.count == 1, "\(slots)")

        // The other shapes, each from its own session, each CKC opened by the device.
        for (index, shape) in ["base64", "form", "json", "apple"].enumerated() {
            let (spc, session) = try Self.spc(fleet: fleet, device: device, session: UInt64(10 + index))
            let base64 = Base64.encode(spc)
            let body: String
            let type: String
            switch shape {
            case "base64": (body, type) = (base64, "text/plain")
            case "form":
                (body, type) = ("spc=\(base64.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")", "application/x-www-form-urlencoded")
            case "json": (body, type) = ("{\"spc\":\"\(base64)\",\"priority\":\"continuity\"}", "application/json")
            default: (body, type) = ("{\"fairplay-streaming-request\":{\"streaming-keys\":[{\"id\":1,\"spc\":\"\(base64)\"}]}}", "application/json")
            }
            let answer = try await HTTPExchange.post(url, body: Array(body.utf8), headers: ["Content-Type": type, "X-Account": "shape-\(shape)"])
            #expect(answer.status == 200, "\(shape): \(answer.text)")
            let ckc: [UInt8]
            switch shape {
            case "base64", "form": ckc = try #require(Base64.decode(Array(answer.text.utf8)), "\(shape)")
            case "json":
                guard case .object(let object)? = try? JSONValue(parsing: answer.body), case .string(let text)? = object["ckc"] else {
                    Issue.record("json: \(answer.text)")
                    continue
                }
                ckc = try #require(Base64.decode(Array(text.utf8)))
            default:
                guard case .object(let object)? = try? JSONValue(parsing: answer.body), case .object(let response)? = object["fairplay-streaming-response"],
                    case .array(let keys)? = response["streaming-keys"], case .object(let key)? = keys.first, case .string(let text)? = key["ckc"]
                else {
                    Issue.record("apple: \(answer.text)")
                    continue
                }
                ckc = try #require(Base64.decode(Array(text.utf8)))
            }
            #expect(try CKCOpener.open(ckc, session: session).contentKey == opened.contentKey, "\(shape)")
        }

        // A body that is no request is refused before any job; an unknown request ID shape too.
        let refused = try await HTTPExchange.post(url, body: Array("hello there!".utf8), headers: ["Content-Type": "text/html"])
        #expect(refused.status == 415 || refused.status == 400, "\(refused.text)")
        let badID = try await HTTPExchange.post(url, body: spc, headers: ["X-Request-ID": "has space"])
        #expect(badID.status == 400, "\(badID.text)")

        let metrics = try await HTTPExchange.get("http://127.0.0.1:\(port)/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.text.contains("ksm_edge_timeouts_total 1"), "\(metrics.text)")
        #expect(metrics.text.contains("ksm_edge_requests_total{tenant=\"\(fleet.catalog.tenant)\",class=\"new\",shape=\"raw\",outcome=\"answered\"} 2"))
        #expect(metrics.text.contains("class=\"continuity\",shape=\"json\",outcome=\"answered\"} 1"))
        #expect(metrics.text.contains("ksm_edge_in_flight 0"))
        // The job that timed out was still answered once a worker came (deadlineExpired): to nobody.
        #expect(!metrics.text.contains("ksm_edge_unmatched_replies_total 0"), "\(metrics.text)")
        // The latency histogram resolves the tens of milliseconds an answer takes, and a real scrape
        // passes Prometheus's own linter.
        #expect(metrics.text.contains("ksm_edge_request_duration_seconds_bucket{outcome=\"answered\",le=\"0.075\"}"), "\(metrics.text)")
        let lint = try await Promtool.checkMetrics(metrics.text)
        #expect(lint.status == 0, "promtool check metrics: \(lint.output)")
        // `ksm bench http` reads the same histogram from the same text: one observation per request
        // a worker answered.
        let answeredLines = metrics.text.split(separator: "\n").filter { $0.hasPrefix("ksm_edge_requests_total{") && $0.contains("outcome=\"answered\"") }
        let answered = answeredLines.compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
        let scraped = ScrapedHistogram(prometheusText: metrics.text, name: EdgeMetrics.durationName) { $0.contains("outcome=\"answered\"") }
        #expect(answered >= 3)
        #expect(scraped.count == answered)
        #expect(await edge.terminate() == 0)
    }

    @Test func twoEdgesSideBySideEachGetOnlyTheirOwnReplies() async throws {
        let fleet = try await Fleet(streams: 1, periods: 1)
        try await fleet.startWorker(extraArguments: ["--class-topics"])
        let (plain, plainPort) = try await Self.startEdge(fleet: fleet, deadlineSeconds: "10")
        defer { plain.kill() }
        let (classes, classesPort) = try await Self.startEdge(fleet: fleet, deadlineSeconds: "10", extraArguments: ["--class-topics"])
        defer { classes.kill() }
        let client = try await FleetClient(fleet: fleet)
        defer { Task { await client.close() } }
        let device = SimulatedDevice(trust: client.trust)
        let requests = try (0..<6).map { index in
            let (spc, session) = try Self.spc(fleet: fleet, device: device, session: UInt64(100 + index))
            return (index, spc, session)
        }
        // Both edges at once, three requests each; the second edge's as prefetch, on the class topic.
        let answers = try await withThrowingTaskGroup(of: (Int, HTTPExchange).self) { group in
            for (index, spc, _) in requests {
                let port = index % 2 == 0 ? plainPort : classesPort
                var headers = ["X-Account": "side-\(index)", "X-Request-ID": "side-by-side-\(index)"]
                if index % 2 == 1 { headers["X-Priority"] = "prefetch" }
                group.addTask {
                    (index, try await HTTPExchange.post("http://127.0.0.1:\(port)/fps/\(fleet.catalog.tenant)/license", body: spc, headers: headers))
                }
            }
            return try await group.reduce(into: [Int: HTTPExchange]()) { $0[$1.0] = $1.1 }
        }
        for (index, _, session) in requests {
            let answer = try #require(answers[index])
            #expect(answer.status == 200, "\(index): \(answer.text)")
            #expect(try CKCOpener.open(answer.body, session: session).contentKey.count == 16, "\(index)")
        }
        let tenant = fleet.catalog.tenant
        let plainMetrics = try await HTTPExchange.get("http://127.0.0.1:\(plainPort)/metrics").text
        let classesMetrics = try await HTTPExchange.get("http://127.0.0.1:\(classesPort)/metrics").text
        #expect(plainMetrics.contains("ksm_edge_requests_total{tenant=\"\(tenant)\",class=\"new\",shape=\"raw\",outcome=\"answered\"} 3"), "\(plainMetrics)")
        #expect(classesMetrics.contains("ksm_edge_requests_total{tenant=\"\(tenant)\",class=\"prefetch\",shape=\"raw\",outcome=\"answered\"} 3"))
        // Each edge read only its own topic: no reply of the other's reached it.
        for text in [plainMetrics, classesMetrics] {
            #expect(text.contains("ksm_edge_unmatched_replies_total 0"), "\(text)")
            #expect(text.contains("ksm_edge_undecodable_replies_total 0"))
        }
        #expect(await plain.terminate() == 0)
        #expect(await classes.terminate() == 0)
    }

    /// An edge killed and started again under the same instance ID (a pod restarted in place) reads
    /// the same reply topic: the reply to the old process's job arrives while the new one runs, is
    /// counted as unmatched and answers nothing; the new process's own request gets its own CKC.
    @Test func aRestartedEdgeNeitherWaitsOnNorMistakesTheOldProcessesReplies() async throws {
        let fleet = try await Fleet(maxStreams: 4, streams: 1, periods: 1)
        let instance = "restart-\(UUID().uuidString.prefix(8))"
        let (first, firstPort) = try await Self.startEdge(fleet: fleet, deadlineSeconds: "1", extraArguments: ["--instance-id", instance])
        defer { first.kill() }
        let client = try await FleetClient(fleet: fleet)
        defer { Task { await client.close() } }
        let device = SimulatedDevice(trust: client.trust)
        // No worker yet: the job waits in Kafka; the first edge answers 504 and is then killed.
        let (old, _) = try Self.spc(fleet: fleet, device: device, session: 1)
        let unanswered = try await HTTPExchange.post(
            "http://127.0.0.1:\(firstPort)/fps/\(fleet.catalog.tenant)/license", body: old,
            headers: ["Content-Type": "application/octet-stream", "X-Account": "old", "X-Request-ID": "before-restart"])
        #expect(unanswered.status == 504, "\(unanswered.text)")
        first.kill()

        let (second, port) = try await Self.startEdge(fleet: fleet, deadlineSeconds: "20", extraArguments: ["--instance-id", instance])
        defer { second.kill() }
        // The worker comes now: it answers the old job (deadlineExpired) onto the shared reply topic.
        try await fleet.startWorker()
        let (spc, session) = try Self.spc(fleet: fleet, device: device, session: 2)
        let answer = try await HTTPExchange.post(
            "http://127.0.0.1:\(port)/fps/\(fleet.catalog.tenant)/license", body: spc,
            headers: ["Content-Type": "application/octet-stream", "X-Account": "new", "X-Request-ID": "after-restart"])
        #expect(answer.status == 200, "\(answer.text)")
        #expect(try CKCOpener.open(answer.body, session: session).contentKey.count == 16)
        // The old reply reached the new process (its worker answered after the restart) and matched nothing.
        var metrics = try await HTTPExchange.get("http://127.0.0.1:\(port)/metrics")
        let deadline = ContinuousClock.now + .seconds(20)
        while metrics.text.contains("ksm_edge_unmatched_replies_total 0"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            metrics = try await HTTPExchange.get("http://127.0.0.1:\(port)/metrics")
        }
        #expect(metrics.text.contains("ksm_edge_unmatched_replies_total 1"), "\(metrics.text)")
        #expect(metrics.text.contains("outcome=\"answered\"} 1"), "\(metrics.text)")
        #expect(await second.terminate() == 0)
    }

    /// `/readyz` follows Kafka after start too: with the only broker down it turns 503 and a license
    /// request is answered 503 at once, producing nothing; with the broker back it turns 200 again.
    @Test func readinessFollowsTheBrokerAfterStart() async throws {
        let fleet = try await Fleet(streams: 1, periods: 1)
        let (edge, port) = try await Self.startEdge(fleet: fleet, deadlineSeconds: "2")
        defer { edge.kill() }
        func waitForReadiness(_ status: Int) async throws -> HTTPExchange {
            var ready = try await HTTPExchange.get("http://127.0.0.1:\(port)/readyz")
            let deadline = ContinuousClock.now + .seconds(30)
            while ready.status != status, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
                ready = try await HTTPExchange.get("http://127.0.0.1:\(port)/readyz")
            }
            return ready
        }
        try await fleet.brokerControl("broker-down 1")
        let down = try await waitForReadiness(503)
        #expect(down.status == 503 && down.text.contains("kafka producer"), "\(down.status) \(down.text)")
        let client = try await FleetClient(fleet: fleet)
        defer { Task { await client.close() } }
        let (spc, _) = try Self.spc(fleet: fleet, device: SimulatedDevice(trust: client.trust), session: 1)
        let refused = try await HTTPExchange.post(
            "http://127.0.0.1:\(port)/fps/\(fleet.catalog.tenant)/license", body: spc, headers: ["Content-Type": "application/octet-stream"])
        #expect(refused.status == 503, "\(refused.text)")
        try await fleet.brokerControl("broker-up 1")
        let up = try await waitForReadiness(200)
        #expect(up.status == 200, "\(up.text)")
        #expect(await edge.terminate() == 0)
    }

    @Test func aRequestInFlightAtSIGTERMIsAnsweredThenTheEdgeExitsZero() async throws {
        let fleet = try await Fleet(streams: 1, periods: 1)
        try await fleet.startWorker()
        let (edge, port) = try await Self.startEdge(fleet: fleet, deadlineSeconds: "5")
        defer { edge.kill() }
        let client = try await FleetClient(fleet: fleet)
        defer { Task { await client.close() } }
        let (spc, session) = try Self.spc(fleet: fleet, device: SimulatedDevice(trust: client.trust), session: 7)
        let head = Array(
            "POST /fps/\(fleet.catalog.tenant)/license HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: \(spc.count)\r\nConnection: close\r\n\r\n"
                .utf8)
        let connection = try RawConnection(port: port)
        // Half the body before SIGTERM, the rest after: the edge reads on, produces, waits, answers.
        try connection.send(head + spc.prefix(64))
        try await Task.sleep(for: .milliseconds(300))
        kill(edge.process.processIdentifier, SIGTERM)
        try await Task.sleep(for: .milliseconds(300))
        try connection.send(Array(spc.dropFirst(64)))
        let answer = try connection.receiveAll()
        let text = String(decoding: answer, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200 OK"), "\(text.prefix(300))")
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        let bodyStart = try #require((0...(answer.count - 4)).first { Array(answer[$0..<$0 + 4]) == separator }) + 4
        #expect(try CKCOpener.open(Array(answer[bodyStart...]), session: session).contentKey.count == 16)
        #expect(await edge.terminate() == 0)
    }

    @Test func servesHTTPSNativelyWithTheCertificateGiven() async throws {
        let certificate = try await SelfSignedCertificate.make()
        defer { certificate.remove() }
        let fleet = try await Fleet(streams: 1, periods: 1)
        try await fleet.startWorker()
        let port = try RedisServerProcess.freeLoopbackPort()
        let edge = try RunningProcess(
            "edge",
            [
                "edge", "--listen", "127.0.0.1:\(port)", "--brokers", fleet.bootstrap, "--instance-id", "tls-\(UUID().uuidString.prefix(8))",
                "--tls-certificate", certificate.certificatePath, "--tls-private-key", certificate.privateKeyPath,
            ])
        defer { edge.kill() }
        let base = "https://127.0.0.1:\(port)"
        let ready = try await Curl.waitForReady("\(base)/readyz", caCertificate: certificate.certificatePath) { edge.isRunning }
        #expect(ready, "\(edge.stderr.suffix(2_000))")
        let client = try await FleetClient(fleet: fleet)
        defer { Task { await client.close() } }
        let (spc, session) = try Self.spc(fleet: fleet, device: SimulatedDevice(trust: client.trust), session: 5)
        let answer = try await Curl.post(
            "\(base)/fps/\(fleet.catalog.tenant)/license", body: spc, headers: ["X-Account": "tls"], caCertificate: certificate.certificatePath)
        #expect(answer.status == 200, "\(answer)")
        #expect(try CKCOpener.open(answer.body, session: session).contentKey.count == 16)
        // Plain HTTP on the TLS port gets no answer.
        let plain = try await Curl.get("http://127.0.0.1:\(port)/healthz", caCertificate: nil)
        #expect(plain.status == nil, "\(plain)")
        #expect(await edge.terminate() == 0)
    }

    @Test func checkConfigPrintsTheSettingsRedactedAndNamesEveryProblem() async throws {
        let good = try await KSMBinary.run(
            [
                "edge", "--check-config", "--brokers", "kafka:9092", "--redis-url", "redis://ksm:hunter2@redis:6379/0", "--kafka-property",
                "sasl.password=swordfish", "--kafka-property", "security.protocol=SASL_SSL", "--instance-id", "edge-1", "--listen", "[::]:9443",
            ], environment: [:])
        #expect(good.status == 0, "\(String(decoding: good.stderr, as: UTF8.self))")
        let printed = String(decoding: good.stdout, as: UTF8.self)
        #expect(printed.contains("redis-url          = redis://<redacted>@redis:6379/0"), "\(printed)")
        #expect(printed.contains("sasl.password=<redacted>") && printed.contains("security.protocol=SASL_SSL"))
        #expect(printed.contains("reply-topic        = fps.license.replies.edge.edge-1"))
        #expect(printed.contains("listen             = [::]:9443"))
        #expect(!printed.contains("hunter2") && !printed.contains("swordfish"))

        let bad = try await KSMBinary.run(
            ["edge", "--check-config", "--redis-url", "redis://ksm:hunter2@redis:6379/0", "--listen", "nowhere", "--deadline", "0"], environment: [:])
        #expect(bad.status == 64)
        let problems = String(decoding: bad.stderr, as: UTF8.self)
        #expect(problems.contains("--listen") && problems.contains("--deadline") && problems.contains("--brokers"), "\(problems)")
        #expect(!problems.contains("hunter2"))
    }

    // MARK: - Helpers

    /// Starts `ksm edge` on a free loopback port in front of `fleet` and waits until `/readyz` answers 200.
    static func startEdge(fleet: Fleet, deadlineSeconds: String, extraArguments: [String] = []) async throws -> (RunningProcess, Int) {
        let port = try RedisServerProcess.freeLoopbackPort()
        let edge = try RunningProcess(
            "edge",
            [
                "edge", "--listen", "127.0.0.1:\(port)", "--brokers", fleet.bootstrap, "--instance-id", "test-\(UUID().uuidString.prefix(8))",
                "--deadline", deadlineSeconds, "--log-format", "json",
            ] + extraArguments)
        let deadline = ContinuousClock.now + .seconds(30)
        var last = ""
        while ContinuousClock.now < deadline {
            if let ready = try? await HTTPExchange.get("http://127.0.0.1:\(port)/readyz") {
                if ready.status == 200 { return (edge, port) }
                last = ready.text
            }
            guard edge.isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        edge.kill()
        throw ProcessFailure(description: "ksm edge did not become ready (\(last)): \(edge.stderr.suffix(2_000))")
    }

    /// An SPC for the demo catalogue's first asset, and the session that opens its CKC.
    static func spc(fleet: Fleet, device: SimulatedDevice, session: UInt64) throws -> ([UInt8], DeviceSession) {
        var options = SPCOptions()
        options.assetID = Array(fleet.catalog.assetID(stream: 0, period: 0).utf8)
        options.playback = MediaPlaybackInfo(creationDate: UInt32(Date().timeIntervalSince1970), state: .readyToPlay, sessionID: session)
        return try device.makeSPC(options)
    }
}
