import AsyncHTTPClient
import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import NIOCore
import NIOHTTP1
import Synchronization

/// Simulated Apple devices asking a license edge over HTTP, as players do: each request is a new
/// viewer (its own device, session and account) posting its SPC in one of the request shapes, with an
/// `X-Request-ID`; every CKC that comes back is opened by the device and checked against the catalogue.
///
/// Requests are made (device-side RSA included) before the clock starts and answers are opened after
/// it stops, so the client's own crypto is not charged to the edge. The client is async-http-client:
/// HTTP/1.1 keep-alive connections, a pool sized to the concurrency.
package struct HTTPLoadGenerator: Sendable {
    /// How requests are paced.
    package enum Pace: Sendable, Equatable {
        /// Closed loop: this many requests in flight, the next sent when one is answered.
        case concurrency(Int)
        /// Open loop: requests arrive at this many per second whatever the answers do, and latency runs
        /// from each arrival on the schedule (no coordinated omission).
        case rate(Double)

        /// `concurrency N` or `rate R/s`.
        package var description: String {
            switch self {
            case .concurrency(let n): "concurrency \(n)"
            case .rate(let r): "rate \(Int(r.rounded()))/s"
            }
        }
    }

    /// What a run sends and how.
    package struct Configuration: Sendable {
        /// License URLs (`http://host:port/fps/{tenant}/license`); a request's first attempt goes to
        /// one in turn, and a retry to the next.
        package var urls: [String]
        package var requests = 1_000
        /// Shapes, taken in turn (round-robin).
        package var shapes = HTTPLoadShape.allCases
        package var pace = Pace.concurrency(32)
        /// HTTP/1.1 connections kept per edge; nil: the concurrency, or 64 for a rate.
        package var connections: Int?
        /// One attempt's limit before it counts as lost and is retried.
        package var attemptTimeout: Duration = .seconds(15)
        /// Attempts after the first, with the same request ID: after a 502/503/504 (after its
        /// `Retry-After`, at most a second) or a lost connection (at once, to the next URL).
        package var retries = 3
        /// A correct CKC after this long from the intended send time counts as ``HTTPLoadReport/late``.
        package var deadline: Duration = .seconds(30)
        /// Prefixes request IDs and accounts (`<runID>-<index>`), so a caller can find them afterwards.
        package var runID = String(UInt64.random(in: 0..<UInt64.max), radix: 36)
        package var spcVersion: UInt32 = 2
        /// Playback state of the SPCs: a first request (`readyToPlay`) takes a lease slot per account.
        package var playback = PlaybackState.readyToPlay

        package init(urls: [String]) { self.urls = urls }

        var connectionsPerEdge: Int {
            switch pace {
            case .concurrency(let n): connections ?? max(1, n)
            case .rate: connections ?? 64
            }
        }
    }

    /// One prepared request and what the device needs to check its answer.
    struct Prepared: Sendable {
        var id: String
        var account: String
        var shape: HTTPLoadShape
        var body: HTTPLoadShape.Body
        var session: DeviceSession
        var expectedKey: [UInt8]
        var expectedIV: [UInt8]
    }

    /// How one request ended.
    struct Outcome: Sendable {
        var status: Int?
        var body: [UInt8]
        var finished: ContinuousClock.Instant
        var latency: Duration
        var attempts: Int
    }

    /// What the sending tasks share: the next request (closed loop), answers so far, retries.
    final class Counters: Sendable {
        let next = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        let retried = Atomic<Int>(0)
        let outcomes: Mutex<[Outcome?]>
        init(count: Int) { outcomes = Mutex([Outcome?](repeating: nil, count: count)) }
    }

    package let configuration: Configuration
    let prepared: [Prepared]

    /// Makes every request up front on `pool`: a device, an SPC for a catalogue asset, the body.
    package init(configuration: Configuration, catalog: DemoCatalog, trust: DeviceTrust, pool: CryptoPool) async throws {
        self.configuration = configuration
        let shapes = configuration.shapes.isEmpty ? HTTPLoadShape.allCases : configuration.shapes
        let (runID, version, playback) = (configuration.runID, configuration.spcVersion, configuration.playback)
        let creation = UInt32(Date().timeIntervalSince1970)
        let made: [Prepared?] = await pool.map(Array(0..<configuration.requests)) { index in
            let device = SimulatedDevice(trust: trust)
            let asset = catalog.assetID(stream: index % max(catalog.streams, 1), period: 0)
            var options = SPCOptions()
            options.spcVersion = version
            options.assetID = Array(asset.utf8)
            options.playback = MediaPlaybackInfo(creationDate: creation, state: playback, sessionID: UInt64(index + 1))
            guard let (spc, session) = try? device.makeSPC(options) else { return nil }
            let shape = shapes[index % shapes.count]
            return Prepared(
                id: "\(runID)-\(index)", account: "\(runID)-\(index)", shape: shape, body: shape.body(spc: spc, assetID: asset), session: session,
                expectedKey: catalog.contentKey(assetID: asset), expectedIV: catalog.contentIV(assetID: asset))
        }
        prepared = made.compactMap { $0 }
        guard prepared.count == configuration.requests else {
            throw HTTPLoadError("could not make every SPC (\(prepared.count) of \(configuration.requests)); check the SPC version and the fixtures")
        }
    }

    /// How far ahead of its due time an open-loop request may go out.
    static let pacingTick: Duration = .milliseconds(2)

    /// Sends every request, paced, then opens every CKC. `progress` gets a line about once a second.
    package func run(progress: (@Sendable (String) -> Void)? = nil) async throws -> HTTPLoadReport {
        var http = HTTPClient.Configuration()
        http.httpVersion = .http1Only
        http.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.connectionsPerEdge)
        // With several edges a refused connection is a dead edge: fail it at once so the retry goes to
        // the next, instead of retrying the dead one for the connect timeout.
        http.connectionPool.retryConnectionEstablishment = configuration.urls.count == 1
        http.timeout = .init(connect: .seconds(2), read: .milliseconds(Int64(configuration.attemptTimeout.seconds * 1000)))
        // No spans: the simulated devices export no traces, and with the global no-op tracer the
        // client still built each request's span attributes (about 8 % of its CPU at half load in
        // `ksm bench http`, by `perf record`), which the fleet's cores paid for.
        http.tracing.tracer = nil
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: http)
        // An edge that cannot be reached fails the run now, saying so, instead of every request
        // spending its attempts on it. Any HTTP answer (a 404 or 405 to a GET too) means it listens.
        for url in Set(configuration.urls) {
            do {
                var probe = HTTPClientRequest(url: url)
                probe.method = .GET
                _ = try await client.execute(probe, timeout: .seconds(5)).body.collect(upTo: 1 << 20)
            } catch {
                try? await client.shutdown()
                throw HTTPLoadError("cannot reach the edge at \(url) (\(error)); check --http and that ksm edge is listening there")
            }
        }
        let counters = Counters(count: prepared.count)
        let start = ContinuousClock.now
        await withTaskGroup(of: Void.self) { group in
            let ticker = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    let finished = counters.done.load(ordering: .relaxed)
                    progress?("answered \(finished) of \(prepared.count)  \(String(format: "%.1f", (ContinuousClock.now - start).seconds)) s")
                }
            }
            switch configuration.pace {
            case .concurrency(let n):
                for _ in 0..<max(1, n) {
                    group.addTask {
                        while true {
                            let index = counters.next.add(1, ordering: .relaxed).oldValue
                            guard index < prepared.count else { return }
                            let outcome = await send(index, intended: ContinuousClock.now, client: client, counters: counters)
                            counters.outcomes.withLock { $0[index] = outcome }
                            counters.done.add(1, ordering: .relaxed)
                        }
                    }
                }
            case .rate(let rate):
                let interval = Duration.seconds(1 / max(rate, 0.001))
                for index in prepared.indices {
                    let due = start + interval * index
                    // A sleep only when more than a tick ahead: the requests due within a tick go
                    // out together, and the client pays no timer per request (the phase's client
                    // CPU per request fell by half). Latency counts from `due` either way.
                    if due - .now > Self.pacingTick { try? await Task.sleep(until: due) }
                    group.addTask {
                        let outcome = await send(index, intended: due, client: client, counters: counters)
                        counters.outcomes.withLock { $0[index] = outcome }
                        counters.done.add(1, ordering: .relaxed)
                    }
                }
            }
            await group.waitForAll()
            ticker.cancel()
        }
        try? await client.shutdown()
        return report(counters.outcomes.withLock { $0 }, start: start, retries: counters.retried.load(ordering: .relaxed))
    }

    /// One request to its end: attempts until an answer that is final, or the retries run out.
    func send(_ index: Int, intended: ContinuousClock.Instant, client: HTTPClient, counters: Counters) async -> Outcome {
        let p = prepared[index]
        let urls = configuration.urls
        var attempt = 0
        var last = Outcome(status: nil, body: [], finished: .now, latency: .zero, attempts: 0)
        while true {
            var request = HTTPClientRequest(url: urls[(index + attempt) % urls.count])
            request.method = .POST
            request.headers.add(name: "Content-Type", value: p.body.contentType)
            request.headers.add(name: "X-Request-ID", value: p.id)
            request.headers.add(name: "X-Account", value: p.account)
            request.body = .bytes(ByteBuffer(bytes: p.body.bytes))
            var retryAfter: Duration?
            do {
                let response = try await client.execute(request, timeout: .milliseconds(Int64(configuration.attemptTimeout.seconds * 1000)))
                let body = try await response.body.collect(upTo: 1 << 20)
                let status = Int(response.status.code)
                last = Outcome(status: status, body: Array(buffer: body), finished: .now, latency: .now - intended, attempts: attempt + 1)
                guard [502, 503, 504].contains(status) else { return last }
                let seconds = response.headers.first(name: "Retry-After").flatMap(Int.init) ?? 1
                retryAfter = .seconds(min(max(seconds, 0), 1))
            } catch {
                last = Outcome(status: nil, body: [], finished: .now, latency: .now - intended, attempts: attempt + 1)
                // A lost connection goes to the next edge at once; one edge alone gets a breath first.
                retryAfter = urls.count > 1 ? .zero : .milliseconds(100)
            }
            guard attempt < configuration.retries else { return last }
            attempt += 1
            counters.retried.add(1, ordering: .relaxed)
            if let retryAfter, retryAfter > .zero { try? await Task.sleep(for: retryAfter) }
        }
    }

    /// Opens every CKC and counts.
    func report(_ outcomes: [Outcome?], start: ContinuousClock.Instant, retries: Int) -> HTTPLoadReport {
        var report = HTTPLoadReport()
        report.pace = configuration.pace.description
        report.requests = prepared.count
        report.retries = retries
        var latencies: [Double] = []
        var correctAnswers: [Double] = []
        var end = start
        for (p, outcome) in zip(prepared, outcomes) {
            report.shapes[p.shape.rawValue, default: 0] += 1
            guard let outcome, let status = outcome.status else {
                report.lost += 1
                continue
            }
            end = max(end, outcome.finished)
            latencies.append(outcome.latency.seconds * 1000)
            guard status == 200 else {
                report.errorsByStatus["\(status)", default: 0] += 1
                continue
            }
            guard let ckc = p.shape.ckc(fromAnswer: outcome.body) else {
                report.wrong["\(p.shape.rawValue): no CKC in the answer", default: 0] += 1
                continue
            }
            do {
                let opened = try CKCOpener.open(ckc, session: p.session)
                if opened.contentKey != p.expectedKey {
                    report.wrong["wrong content key", default: 0] += 1
                } else if opened.contentIV != p.expectedIV {
                    report.wrong["wrong content IV", default: 0] += 1
                } else {
                    report.correct += 1
                    correctAnswers.append((outcome.finished - start).seconds)
                    if outcome.latency > configuration.deadline { report.late += 1 }
                }
            } catch {
                report.wrong["CKC does not open: \(error.reason)", default: 0] += 1
            }
        }
        let seconds = (end - start).seconds
        report.seconds = (seconds * 1000).rounded() / 1000
        report.ckcPerSecond = seconds > 0 ? (Double(report.correct) / seconds).rounded() : 0
        report.steadyCKCPerSecond = SteadyRate.perSecond(correctAnswers, whole: report.ckcPerSecond).rounded()
        report.latencyMilliseconds = .init(milliseconds: latencies)
        return report
    }
}

/// Why an HTTP load run could not be made; `description` is a sentence for the person at the terminal.
package struct HTTPLoadError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}
