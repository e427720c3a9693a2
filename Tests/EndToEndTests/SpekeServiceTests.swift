import FairPlay
import FairPlayDevice
import Foundation
import KSMLoad
import KSMService
import KSMTestSupport
import Licensing
import Speke
import Testing
import Wire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `ksm speke` as a packager meets it: the real binary on a free port over a real redis-server,
/// the tenant seeded and a packager credential created with `ksm admin`, AWS's verification-suite
/// FairPlay request POSTed with the token; and, through a fleet, the key it issued opened in a CKC
/// that `ksm serve` built for a simulated device's SPC carrying the URI's asset ID.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct SpekeServiceTests {
    @Test func answersTheAWSFairPlayRequestAndRefusesWhatItMust() async throws {
        let tenant = try await ProvisionedTenant.start()
        defer { tenant.stop() }
        let (redis, kekPath, token) = (tenant.redis, tenant.kekPath, tenant.token)
        let (speke, port) = try await Self.startSpeke(redisURL: redis.url, kekPath: kekPath)
        defer { speke.kill() }
        let url = "http://127.0.0.1:\(port)/speke/v2/demo/copyProtection"
        let request = Array(Self.fairPlayRequest.utf8)

        let first = try await HTTPExchange.post(url, body: request, headers: ["Authorization": "Bearer \(token)", "X-Speke-Version": "2.0"])
        #expect(first.status == 200, "\(first.text)")
        #expect(first.headers["content-type"] == "application/xml")
        #expect(first.headers["x-speke-version"] == "2.0")
        #expect(first.headers["x-speke-user-agent"]?.hasPrefix("FairPlayKSM") == true)
        let keys = try Self.fairPlayKeys(first.body)
        #expect(keys.count == 2)
        for key in keys {
            #expect(key.media.hasPrefix("#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"skd://test_case_1/0/"), "\(key.media)")
            #expect(key.master == key.media.replacingOccurrences(of: "#EXT-X-KEY:", with: "#EXT-X-SESSION-KEY:"))
            #expect(key.key.count == 16 && key.iv.count == 16)
        }
        // The answer is valid against the DASH-IF CPIX schema, and the independent reader reads our keys.
        let report = try #require(try await CPIXSchemaCheck.check([(name: "answer", bytes: first.body)])["answer"])
        #expect(report.isValid, "\(report.problems)")
        #expect(Set(report.read?.contentKeys.compactMap(\.plainValue) ?? []) == Set(keys.map(\.key)))
        let again = try await HTTPExchange.post(url, body: request, headers: ["Authorization": "Bearer \(token)", "X-Speke-Version": "2.0"])
        #expect(again.status == 200)
        #expect(try Self.fairPlayKeys(again.body) == keys)

        let anonymous = try await HTTPExchange.post(url, body: request, headers: ["X-Speke-Version": "2.0"])
        #expect(anonymous.status == 401)
        #expect(anonymous.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
        let wrong = try await HTTPExchange.post(url, body: request, headers: ["Authorization": "Bearer ksmpk_wrong", "X-Speke-Version": "2.0"])
        #expect(wrong.status == 401 || wrong.status == 403)
        let otherTenant = try await HTTPExchange.post(
            "http://127.0.0.1:\(port)/speke/v2/nobody/copyProtection", body: request, headers: ["Authorization": "Bearer \(token)", "X-Speke-Version": "2.0"])
        #expect(otherTenant.status == 403)
        let invalidTenant = try await HTTPExchange.post(
            "http://127.0.0.1:\(port)/speke/v2/a:b/copyProtection", body: request, headers: ["Authorization": "Bearer \(token)", "X-Speke-Version": "2.0"])
        #expect(invalidTenant.status == 404)

        let dtd = Array(
            "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"aaaa\"><!ENTITY b \"&a;&a;&a;&a;\">]><cpix:CPIX xmlns:cpix=\"urn:dashif:org:cpix\">&b;</cpix:CPIX>"
                .utf8)
        let refusedDTD = try await HTTPExchange.post(url, body: dtd, headers: ["Authorization": "Bearer \(token)", "X-Speke-Version": "2.0"])
        #expect((400..<500).contains(refusedDTD.status), "\(refusedDTD.status) \(refusedDTD.text)")
        let oversize = try await HTTPExchange.post(
            url, body: [UInt8](repeating: UInt8(ascii: " "), count: (1 << 20) + 1), headers: ["Authorization": "Bearer \(token)", "X-Speke-Version": "2.0"])
        #expect(oversize.status == 413)
        let noVersion = try await HTTPExchange.post(url, body: request, headers: ["Authorization": "Bearer \(token)"])
        #expect(noVersion.status == 422)
        #expect(noVersion.text == "Unsupported SPEKE version")
        let cenc = Array(Self.fairPlayRequest.replacingOccurrences(of: "cbcs", with: "cenc").utf8)
        let refusedScheme = try await HTTPExchange.post(url, body: cenc, headers: ["Authorization": "Bearer \(token)", "X-Speke-Version": "2.0"])
        #expect(refusedScheme.status == 422)
        #expect(refusedScheme.text == "ContentKey@commonEncryptionScheme non compatible with DRMSystem 94ce86fb-07ff-4f43-adb8-93d2fa968ca2")

        let metrics = try await HTTPExchange.get("http://127.0.0.1:\(port)/metrics")
        #expect(metrics.text.contains("ksm_speke_requests_total{tenant=\"demo\",outcome=\"ok\"} 2"), "\(metrics.text)")
        #expect(metrics.text.contains("ksm_speke_keys_issued_total{tenant=\"demo\"} 4"))
        #expect(metrics.text.contains("ksm_speke_requests_total{tenant=\"unauthenticated\",outcome=\"unauthorized\"} 2"))
        #expect(!speke.stderr.contains(token))

        // HTTP Basic: the credential ID as user, the token as password.
        let basic = Base64.encode(Array("mediapackage:\(token)".utf8))
        let basicAnswer = try await HTTPExchange.post(url, body: request, headers: ["Authorization": "Basic \(basic)", "X-Speke-Version": "2.0"])
        #expect(basicAnswer.status == 200, "\(basicAnswer.text)")
        // Revoked: the tenant has no credential left, so 403 from the next request on.
        let revoked = try await KSMBinary.run(["admin", "remove-packager-credential", "--redis-url", redis.url, "--tenant", "demo"])
        #expect(revoked.status == 0)
        let afterRevocation = try await HTTPExchange.post(url, body: request, headers: ["Authorization": "Bearer \(token)", "X-Speke-Version": "2.0"])
        #expect(afterRevocation.status == 403)
        // Redis gone: credentials cannot be read (503, retry), and /readyz says so.
        redis.stop()
        let unavailable = try await HTTPExchange.post(url, body: request, headers: ["Authorization": "Bearer \(token)", "X-Speke-Version": "2.0"])
        #expect(unavailable.status == 503, "\(unavailable.text)")
        #expect(unavailable.headers["retry-after"] == "1")
        var ready = try await HTTPExchange.get("http://127.0.0.1:\(port)/readyz")
        let deadline = ContinuousClock.now + .seconds(15)
        while ready.status == 200, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            ready = try await HTTPExchange.get("http://127.0.0.1:\(port)/readyz")
        }
        #expect(ready.status == 503, "\(ready.text)")
        #expect(await speke.terminate() == 0)
    }

    @Test func theIssuedKeyOpensInACKCBuiltByKSMServe() async throws {
        let fleet = try await Fleet(streams: 1, periods: 1)
        let created = try await KSMBinary.run(["admin", "put-packager-credential", "--redis-url", fleet.redisURL, "--tenant", fleet.catalog.tenant])
        #expect(created.status == 0)
        let token = try #require(String(decoding: created.stdout, as: UTF8.self).split(separator: "\n").last.map(String.init))
        let (speke, port) = try await Self.startSpeke(redisURL: fleet.redisURL, kekPath: fleet.kekPath)
        defer { speke.kill() }
        let answer = try await HTTPExchange.post(
            "http://127.0.0.1:\(port)/speke/v2/\(fleet.catalog.tenant)/copyProtection", body: Array(Self.fairPlayRequest.utf8),
            headers: ["Authorization": "Bearer \(token)", "X-Speke-Version": "2.0"])
        #expect(answer.status == 200, "\(answer.text)")
        let keys = try Self.fairPlayKeys(answer.body)
        try #require(keys.count == 2)

        try await fleet.startWorker()
        let client = try await FleetClient(fleet: fleet)
        let device = SimulatedDevice(trust: client.trust)
        for (index, key) in keys.enumerated() {
            var options = SPCOptions()
            options.assetID = Array(key.uri.utf8)
            options.playback = MediaPlaybackInfo(creationDate: UInt32(Date().timeIntervalSince1970), state: .readyToPlay, sessionID: UInt64(index + 1))
            let (spc, session) = try device.makeSPC(options)
            let id = "speke-\(index)"
            let job = LicenseJob(
                id: try StoreIdentifier(id), tenant: try StoreIdentifier(fleet.catalog.tenant), account: try StoreIdentifier("packaged"), spc: spc)
            try await client.sendRaw(job.jsonBytes(), key: "packaged", headers: [("correlation-id", Array(id.utf8))])
            let reply = try await client.reply(id)
            #expect(reply.status == .ok, "\(key.uri): \(reply.reason)")
            let opened = try CKCOpener.open(try #require(reply.ckc), session: session)
            #expect(opened.contentKey == key.key, "\(key.uri)")
            #expect(opened.contentIV == key.iv, "\(key.uri)")
        }
        await client.close()
    }

    @Test func aRequestInFlightAtSIGTERMIsAnswered() async throws {
        let tenant = try await ProvisionedTenant.start()
        defer { tenant.stop() }
        let (redis, kekPath, token) = (tenant.redis, tenant.kekPath, tenant.token)
        let (speke, port) = try await Self.startSpeke(redisURL: redis.url, kekPath: kekPath)
        defer { speke.kill() }
        let body = Array(Self.fairPlayRequest.utf8)
        let head = Array(
            "POST /speke/v2/demo/copyProtection HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Speke-Version: 2.0\r\nAuthorization: Bearer \(token)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
                .utf8)
        let connection = try RawConnection(port: port)
        // Half the body before SIGTERM, the rest after: the server must read on and answer.
        try connection.send(head + body.prefix(100))
        try await Task.sleep(for: .milliseconds(300))
        kill(speke.process.processIdentifier, SIGTERM)
        try await Task.sleep(for: .milliseconds(300))
        try connection.send(Array(body.dropFirst(100)))
        let answer = String(decoding: try connection.receiveAll(), as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 200 OK"), "\(answer.prefix(300))")
        #expect(answer.contains("<pskc:PlainValue>"))
        #expect(await speke.terminate() == 0)
    }

    @Test func checkConfigPrintsTheSettingsRedactedAndNamesEveryProblem() async throws {
        let good = try await KSMBinary.run(["speke", "--check-config", "--redis-url", "redis://ksm:hunter2@redis:6379/0", "--listen", "[::]:9443"])
        #expect(good.status == 0, "\(String(decoding: good.stderr, as: UTF8.self))")
        let printed = String(decoding: good.stdout, as: UTF8.self)
        #expect(printed.contains("redis-url         = redis://<redacted>@redis:6379/0"))
        #expect(printed.contains("listen            = [::]:9443"))
        #expect(!printed.contains("hunter2"))
        let bad = try await KSMBinary.run(
            ["speke", "--check-config", "--redis-url", "redis://ksm:hunter2@redis:6379/0", "--listen", "nowhere", "--max-request-bytes", "1"],
            environment: [:])
        #expect(bad.status == 64)
        let problems = String(decoding: bad.stderr, as: UTF8.self)
        #expect(problems.contains("--listen") && problems.contains("--max-request-bytes"), "\(problems)")
        #expect(!problems.contains("hunter2"))
    }

    // MARK: - Helpers

    /// One FairPlay key of an answer: the key and IV, and the decoded HLS tags with their URI.
    @Test("two ksm speke processes asked the same new request at the same moment answer the same keys")
    func twoProvidersAgreeOnNewKeys() async throws {
        let tenant = try await ProvisionedTenant.start()
        defer { tenant.stop() }
        let (redis, kekPath, token) = (tenant.redis, tenant.kekPath, tenant.token)
        let (first, firstPort) = try await Self.startSpeke(redisURL: redis.url, kekPath: kekPath)
        defer { first.kill() }
        let (second, secondPort) = try await Self.startSpeke(redisURL: redis.url, kekPath: kekPath)
        defer { second.kill() }
        let headers = ["Authorization": "Bearer \(token)", "X-Speke-Version": "2.0"]
        // A content ID of its own per round: each round's keys are new, so both instances decide them at once.
        for round in 0..<8 {
            let body = Array(Self.fairPlayRequest.replacingOccurrences(of: #"contentId="test_case_1""#, with: #"contentId="race_\#(round)""#).utf8)
            async let fromFirst = HTTPExchange.post("http://127.0.0.1:\(firstPort)/speke/v2/demo/copyProtection", body: body, headers: headers)
            async let fromSecond = HTTPExchange.post("http://127.0.0.1:\(secondPort)/speke/v2/demo/copyProtection", body: body, headers: headers)
            let (a, b) = try await (fromFirst, fromSecond)
            #expect(a.status == 200 && b.status == 200, "\(a.text) \(b.text)")
            let (keysA, keysB) = (try Self.fairPlayKeys(a.body), try Self.fairPlayKeys(b.body))
            #expect(keysA.count == 2)
            #expect(keysA == keysB, "round \(round): the two instances answered different keys")
            #expect(keysA.allSatisfy { $0.uri.hasPrefix("skd://race_\(round)/") }, "\(keysA.map(\.uri))")
        }
    }

    /// A redis-server with the demo tenant seeded (its KEK in a file of a directory of its own) and a
    /// packager token for it; `stop()` ends the server and removes the directory.
    struct ProvisionedTenant {
        let redis: RedisServerProcess
        let directory: URL
        let kekPath: String
        let token: String

        static func start() async throws -> ProvisionedTenant {
            let redis = try await RedisServerProcess()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-speke-\(UUID().uuidString)")
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let kekPath = directory.appendingPathComponent("kek.hex").path
                let token = try await SpekeServiceTests.provision(redisURL: redis.url, kekPath: kekPath)
                return ProvisionedTenant(redis: redis, directory: directory, kekPath: kekPath, token: token)
            } catch {
                redis.stop()
                try? FileManager.default.removeItem(at: directory)
                throw error
            }
        }

        func stop() {
            redis.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    struct AnsweredKey: Equatable {
        var kid: String
        var key: [UInt8]
        var iv: [UInt8]
        var media: String
        var master: String
        var uri: String
    }

    /// Seeds the demo tenant (KEK written to `kekPath`) and returns a new packager token for it.
    static func provision(redisURL: String, kekPath: String) async throws -> String {
        let seeded = try await KSMBinary.run(["admin", "seed-demo", "--redis-url", redisURL, "--kek-out", kekPath, "--streams", "1", "--periods", "1"])
        guard seeded.status == 0 else { throw ProcessFailure(description: "seed-demo failed: \(String(decoding: seeded.stderr, as: UTF8.self))") }
        let created = try await KSMBinary.run(["admin", "put-packager-credential", "--redis-url", redisURL, "--tenant", "demo", "--id", "mediapackage"])
        guard created.status == 0, let token = String(decoding: created.stdout, as: UTF8.self).split(separator: "\n").last else {
            throw ProcessFailure(description: "put-packager-credential failed: \(String(decoding: created.stderr, as: UTF8.self))")
        }
        return String(token)
    }

    /// Starts `ksm speke` on a free loopback port and waits until `/readyz` answers 200.
    static func startSpeke(redisURL: String, kekPath: String) async throws -> (RunningProcess, Int) {
        let port = try RedisServerProcess.freeLoopbackPort()
        let speke = try RunningProcess(
            "speke", ["speke", "--listen", "127.0.0.1:\(port)", "--redis-url", redisURL, "--kek", "demo-kek=\(kekPath)", "--log-format", "json"])
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let ready = try? await HTTPExchange.get("http://127.0.0.1:\(port)/readyz"), ready.status == 200 { return (speke, port) }
            guard speke.isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        speke.kill()
        throw ProcessFailure(description: "ksm speke did not become ready: \(speke.stderr.suffix(2_000))")
    }

    /// The answer read with the project's own hostile-safe reader: every `ContentKey`'s
    /// `PlainValue` and `explicitIV`, and its FairPlay `DRMSystem`'s two `HLSSignalingData`.
    static func fairPlayKeys(_ body: [UInt8]) throws -> [AnsweredKey] {
        let cpix = "urn:dashif:org:cpix"
        let pskc = "urn:ietf:params:xml:ns:keyprov:pskc"
        let root = try SafeXMLReader.read(body)
        let contentKeys = root.elements(cpix, "ContentKeyList").flatMap { $0.elements(cpix, "ContentKey") }
        let systems = root.elements(cpix, "DRMSystemList").flatMap { $0.elements(cpix, "DRMSystem") }
        return try contentKeys.map { element in
            let kid = try #require(element[attribute: "kid"])
            let plain = try #require(
                element.elements(cpix, "Data").first?.elements(pskc, "Secret").first?.elements(pskc, "PlainValue").first?.trimmedText)
            let system = try #require(systems.first { $0[attribute: "kid"] == kid && $0[attribute: "systemId"] == "94ce86fb-07ff-4f43-adb8-93d2fa968ca2" })
            func tag(_ playlist: String) throws -> String {
                let data = try #require(system.elements(cpix, "HLSSignalingData").first { $0[attribute: "playlist"] == playlist })
                return String(decoding: try #require(Base64.decode(Array(data.trimmedText.utf8))), as: UTF8.self)
            }
            let media = try tag("media")
            let uriStart = try #require(media.range(of: "URI=\"")).upperBound
            let uri = String(media[uriStart...].prefix { $0 != "\"" })
            let ivText = try #require(element[attribute: "explicitIV"])
            return AnsweredKey(
                kid: kid, key: try #require(Base64.decode(Array(plain.utf8))), iv: try #require(Base64.decode(Array(ivText.utf8))), media: media,
                master: try tag("master"), uri: uri)
        }
    }

    /// AWS's verification-suite FairPlay request (Fixtures/speke, where its source is named).
    static let fairPlayRequest = String(
        decoding: FileManager.default.contents(
            atPath: KSMBinary.packageRoot.appendingPathComponent("Fixtures/speke/aws-verification-fairplay-request.xml").path)!,
        as: UTF8.self)
}

/// One HTTP exchange with URLSession, headers keyed in lower case.
struct HTTPExchange {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }

    static func get(_ url: String) async throws -> HTTPExchange {
        try await send(URLRequest(url: try #require(URL(string: url))))
    }

    static func post(_ url: String, body: [UInt8], headers: [String: String]) async throws -> HTTPExchange {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        request.setValue("application/xml", forHTTPHeaderField: "Content-Type")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return try await send(request)
    }

    private static func send(_ request: URLRequest) async throws -> HTTPExchange {
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return HTTPExchange(status: http.statusCode, headers: headers, body: Array(data))
    }
}

/// A blocking TCP connection to a loopback port, for a request sent in parts (URLSession sends a
/// body whole). Each call is bounded by a 10 s socket timeout.
final class RawConnection {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ProcessFailure(description: "socket: errno \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw ProcessFailure(description: "connect to port \(port): errno \(errno)")
        }
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw ProcessFailure(description: "send: errno \(errno)") }
            sent += n
        }
    }

    /// Everything until the server closes the connection (or the timeout).
    func receiveAll() throws -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received += buffer[..<n]
        }
        return received
    }
}
