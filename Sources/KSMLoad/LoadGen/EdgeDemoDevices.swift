import ChildProcesses
import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import Licensing
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `ksm demo`'s simulated devices as players meet a license edge: each viewer joins by POSTing its
/// SPC over HTTP to `/fps/{tenant}/license` in one of the five request shapes (docs/edge.md), in
/// turn, then asks again at every key rotation, all at once; every CKC that comes back is opened by
/// the device and checked against the catalogue. The scenario and the report are
/// ``LoadGenerator``'s, so the demo prints the same summary whichever way its devices ask.
package struct EdgeDemoDevices: Sendable {
    /// `http://HOST:PORT`, the edge's base URL.
    package let edge: String
    package let configuration: LoadGeneratorConfiguration
    package let catalog: DemoCatalog
    package let trust: DeviceTrust

    package init(edge: String, configuration: LoadGeneratorConfiguration, catalog: DemoCatalog, trust: DeviceTrust) {
        self.edge = edge
        self.configuration = configuration
        self.catalog = catalog
        self.trust = trust
    }

    /// The license URL of the catalogue's tenant.
    package var licenseURL: String { "\(edge)/fps/\(catalog.tenant)/license" }

    /// A TCP port on 127.0.0.1 for the demo's edge.
    package static func unusedLoopbackPort() throws -> Int { try RedisServerProcess.freeLoopbackPort() }

    struct Request: Sendable {
        var id: String
        var account: String
        var shape: HTTPLoadShape
        var body: [UInt8]
        var contentType: String
        var session: DeviceSession
        var expectedKey: [UInt8]
        var expectedIV: [UInt8]
        var burst: Int?
    }

    final class Tracker: Sendable {
        struct State {
            var report = LoadReport()
            var latencies: [Double] = []
            var burstLatencies: [Double] = []
            var burstStart: [Int: ContinuousClock.Instant] = [:]
            var burstLastReply: [Int: ContinuousClock.Instant] = [:]
            var shapes: [String: Int] = [:]
        }
        let state = Mutex(State())
    }

    /// Requests answered per shape, beside the report.
    package struct Outcome: Sendable {
        package var report: LoadReport
        package var shapes: [String: Int]
    }

    /// Runs the scenario through the edge; `progress` gets a line about once a second.
    package func run(progress: (@Sendable (String) -> Void)? = nil) async throws -> Outcome {
        let runID = String(UInt64.random(in: 0..<UInt64.max), radix: 36)
        let session = Self.session(connections: min(64, max(4, configuration.viewers)))
        defer { session.invalidateAndCancel() }
        // As a player app starts: the tenant's application certificate from the edge, then every
        // SPC built for it.
        let certified = try await fetchTrust(session: session)
        let viewers = (0..<configuration.viewers).map { _ in SimulatedDevice(trust: certified) }
        let sessions = (0..<configuration.viewers).map { _ in UInt64.random(in: 1..<UInt64.max) }
        let accounts = max(1, configuration.accounts ?? configuration.viewers)
        let tracker = Tracker()

        let start = ContinuousClock.now
        let elapsed = await withTaskGroup(of: Void.self) { background in
            background.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    let (sent, replies, correct) = tracker.state.withLock { ($0.report.sent, $0.report.replies, $0.report.correct) }
                    progress?("sent \(sent)  answers \(replies)  correct \(correct)  \(String(format: "%.1f", (ContinuousClock.now - start).seconds)) s")
                }
            }
            await ViewerScenario(configuration: configuration, periods: catalog.periods).play(
                from: start,
                make: { step in
                    try? makeRequest(
                        runID: runID, viewer: step.viewer, device: viewers[step.viewer], session: sessions[step.viewer],
                        account: step.viewer % accounts, period: step.period, state: step.state, burst: step.burst)
                },
                burstStarts: { rotation in tracker.state.withLock { $0.burstStart[rotation] = .now } },
                send: { request in await self.send(request, session: session, tracker: tracker) })
            background.cancelAll()
            return (ContinuousClock.now - start).seconds
        }

        return tracker.state.withLock { state in
            var report = state.report
            report.missing = report.sent - report.replies
            report.seconds = (elapsed * 100).rounded() / 100
            report.repliesPerSecond = (Double(report.replies) / max(elapsed, 0.001)).rounded()
            report.latencyMilliseconds = .init(milliseconds: state.latencies)
            report.burstLatencyMilliseconds = .init(milliseconds: state.burstLatencies)
            var drain = 0.0
            for (burst, begin) in state.burstStart {
                if let last = state.burstLastReply[burst] { drain = max(drain, (last - begin).seconds) }
            }
            report.burstDrainSeconds = (drain * 1000).rounded() / 1000
            return Outcome(report: report, shapes: state.shapes)
        }
    }

    /// One SPC of a new device for the catalogue's first stream, for a person to POST with curl.
    package func sampleSPC() throws -> [UInt8] {
        var options = SPCOptions()
        options.spcVersion = configuration.spcVersion
        options.assetID = Array(catalog.assetID(stream: 0, period: 0).utf8)
        options.playback = MediaPlaybackInfo(
            creationDate: UInt32(Date().timeIntervalSince1970), state: .readyToPlay, sessionID: UInt64.random(in: 1..<UInt64.max))
        return try SimulatedDevice(trust: trust).makeSPC(options).0
    }

    /// The URL players fetch the tenant's application certificate from.
    package var certificateURL: String { "\(edge)/fps/\(catalog.tenant)/certificate" }

    /// The device trust built from the certificate the edge serves (`GET /fps/{tenant}/certificate`),
    /// with the device's own ASk and 2048-bit key; fails, saying what came back, unless the edge
    /// serves the certificate this device's trust names.
    func fetchTrust(session: URLSession) async throws -> DeviceTrust {
        guard let url = URL(string: certificateURL) else { throw EdgeDemoError("not a URL: \(certificateURL)") }
        let (data, response) = try await session.data(from: url)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            throw EdgeDemoError("GET \(certificateURL) answered \(status): \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
        let der = Array(data)
        guard FairPlayCrypto.sha1(der) == trust.certificateHash else {
            throw EdgeDemoError("GET \(certificateURL) served a certificate other than the one the devices trust (\(der.count) bytes)")
        }
        do {
            return try DeviceTrust(certificateDER: der, publicKey2048: trust.publicKey2048, ask: trust.ask)
        } catch {
            throw EdgeDemoError("the certificate from \(certificateURL) is not usable: \(error)")
        }
    }

    static func session(connections: Int) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = connections
        configuration.timeoutIntervalForRequest = 30
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration)
    }

    func makeRequest(
        runID: String, viewer: Int, device: SimulatedDevice, session: UInt64, account: Int, period: Int, state: PlaybackState, burst: Int?
    ) throws -> Request {
        let stream = viewer % max(catalog.streams, 1)
        let asset = catalog.assetID(stream: stream, period: period)
        var options = SPCOptions()
        options.spcVersion = configuration.spcVersion
        options.assetID = Array(asset.utf8)
        options.playback = MediaPlaybackInfo(creationDate: UInt32(Date().timeIntervalSince1970), state: state, sessionID: session)
        let (spc, deviceSession) = try device.makeSPC(options)
        // Shapes in turn, the rotation shifting them, so every viewer uses several over the run.
        let shape = HTTPLoadShape.allCases[(viewer + (burst ?? 0)) % HTTPLoadShape.allCases.count]
        let body = shape.body(spc: spc, assetID: asset, priority: state == .leaseRenewal ? "continuity" : "new")
        return Request(
            id: "\(runID)-\(viewer)-\(period)-\(burst ?? 0)", account: "acct-\(account)", shape: shape, body: body.bytes, contentType: body.contentType,
            session: deviceSession, expectedKey: catalog.contentKey(assetID: asset), expectedIV: catalog.contentIV(assetID: asset), burst: burst)
    }

    /// POSTs one request (again, with the same request ID, after a 503 or 504 or a lost connection)
    /// and checks its answer.
    func send(_ request: Request, session: URLSession, tracker: Tracker) async {
        guard let url = URL(string: licenseURL) else { return }
        var http = URLRequest(url: url)
        http.httpMethod = "POST"
        http.httpBody = Data(request.body)
        http.setValue(request.contentType, forHTTPHeaderField: "Content-Type")
        http.setValue(request.account, forHTTPHeaderField: "X-Account")
        http.setValue(request.id, forHTTPHeaderField: "X-Request-ID")
        let sent = ContinuousClock.now
        tracker.state.withLock {
            $0.report.sent += 1
            $0.shapes[request.shape.rawValue, default: 0] += 1
        }
        var answer: (Data, Int)?
        for attempt in 0..<4 {
            if attempt > 0 { try? await Task.sleep(for: .milliseconds(200 * attempt)) }
            guard let (data, response) = try? await session.data(for: http), let status = (response as? HTTPURLResponse)?.statusCode else { continue }
            answer = (data, status)
            if status != 503 && status != 504 { break }
        }
        let now = ContinuousClock.now
        guard let (data, status) = answer else { return }
        var verdict: String?
        if status != 200 {
            verdict = "HTTP \(status): \(String(decoding: data.prefix(120), as: UTF8.self))"
        } else if let ckc = request.shape.ckc(fromAnswer: Array(data)) {
            do {
                let opened = try CKCOpener.open(ckc, session: request.session)
                if opened.contentKey != request.expectedKey {
                    verdict = "wrong content key (\(request.shape.rawValue))"
                } else if opened.contentIV != request.expectedIV {
                    verdict = "wrong content IV (\(request.shape.rawValue))"
                }
            } catch {
                verdict = "CKC does not open (\(request.shape.rawValue)): \(error.reason)"
            }
        } else {
            verdict = "200 without a CKC (\(request.shape.rawValue))"
        }
        let latency = (now - sent).seconds * 1000
        tracker.state.withLock { state in
            state.report.replies += 1
            state.report.statuses["HTTP \(status)", default: 0] += 1
            state.latencies.append(latency)
            if let burst = request.burst {
                state.burstLatencies.append(latency)
                state.burstLastReply[burst] = max(state.burstLastReply[burst] ?? now, now)
            }
            if let verdict { state.report.wrong[verdict, default: 0] += 1 } else { state.report.correct += 1 }
        }
    }
}

/// Why the demo's devices could not start; a sentence for the person at the terminal.
package struct EdgeDemoError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}
