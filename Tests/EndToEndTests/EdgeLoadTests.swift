import Foundation
import KSMLoad
import KSMService
import KSMTestSupport
import Licensing
import Testing

/// `ksm loadgen --http` against real edges in front of a real fleet (`ksm broker`, redis-server, the
/// demo catalogue, `ksm serve` workers): a few hundred requests in every request shape, each CKC
/// opened by its device, read from the loadgen's JSON summary and exit code; then two edges and two
/// workers with one edge SIGKILLed mid-run, the players retrying on the other edge with the same
/// request ID: every CKC correct, none past its deadline, one lease slot per viewer.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct EdgeLoadTests {
    @Test func loadgenOverHTTPGetsACorrectCKCInEveryShape() async throws {
        let fleet = try await Fleet(streams: 2, periods: 1)
        try await fleet.startWorker()
        let (edge, port) = try await EdgeServiceTests.startEdge(fleet: fleet, deadlineSeconds: "5")
        defer { edge.kill() }
        let result = try await KSMBinary.run(
            [
                "loadgen", "--http", "http://127.0.0.1:\(port)", "--requests", "300", "--concurrency", "16", "--streams", "2", "--periods", "1",
                "--json",
            ], timeout: .seconds(120))
        let report = try Self.summary(result.stdout)
        #expect(result.status == 0, "\(String(decoding: result.stderr, as: UTF8.self).suffix(2_000))")
        #expect(report.allCorrect && report.correct == 300, "\(report)")
        #expect(report.wrong.isEmpty && report.errorsByStatus.isEmpty && report.lost == 0, "\(report)")
        #expect(report.shapes == Dictionary(uniqueKeysWithValues: HTTPLoadShape.allCases.map { ($0.rawValue, 60) }), "\(report.shapes)")
        #expect(await edge.terminate() == 0)
    }

    @Test func anEdgeKilledMidRunLosesNoLicenseAndTakesNoSecondLeaseSlot() async throws {
        let requests = 20_000
        let fleet = try await Fleet(streams: 2, periods: 1)
        try await fleet.startWorker()
        try await fleet.startWorker()
        try await fleet.waitUntilBalanced()
        let (doomed, doomedPort) = try await EdgeServiceTests.startEdge(fleet: fleet, deadlineSeconds: "5")
        defer { doomed.kill() }
        let (survivor, survivorPort) = try await EdgeServiceTests.startEdge(fleet: fleet, deadlineSeconds: "5")
        defer { survivor.kill() }
        let runID = "kill-\(UUID().uuidString.prefix(8).lowercased())"
        let loadgen = try RunningProcess(
            "loadgen",
            [
                "loadgen", "--http", "http://127.0.0.1:\(doomedPort)", "--http", "http://127.0.0.1:\(survivorPort)", "--requests", "\(requests)",
                "--concurrency", "32", "--streams", "2", "--periods", "1", "--retries", "5", "--attempt-timeout", "6", "--request-deadline", "15",
                "--run-id", runID, "--json",
            ])
        defer { loadgen.kill() }

        // Mid-run by the doomed edge's own count of requests it answered (its /metrics), not by a clock.
        let deadline = ContinuousClock.now + .seconds(90)
        while ContinuousClock.now < deadline, loadgen.isRunning {
            if let metrics = try? await HTTPExchange.get("http://127.0.0.1:\(doomedPort)/metrics"), Self.requestsAnswered(metrics.text) >= requests / 5 {
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(loadgen.isRunning, "the load ended before the edge was killed")
        doomed.kill()

        let line = try await loadgen.waitForLine(timeout: .seconds(360)) { $0.hasPrefix("{") }
        let report = try Self.summary(Array(line.utf8))
        let exit = await loadgen.process.waitForExit(timeout: .seconds(30))
        #expect(exit?.status == 0, "\(loadgen.stderr.suffix(2_000))")
        #expect(report.allCorrect && report.correct == requests, "\(report)")
        #expect(report.late == 0, "\(report.late) CKCs came after their deadline")
        #expect(report.retries > 0, "no request was retried: the kill hit no request in flight or on its way")

        // One lease slot per viewer: a retried request ID was answered without a second slot.
        let store = try fleet.store()
        let tenant = try StoreIdentifier(fleet.catalog.tenant)
        let now = LicenseProcessor.currentTimeMilliseconds()
        var counts: [Int: Int] = [:]
        for index in 0..<requests {
            let slots = try await store.listSlots(tenant: tenant, account: try StoreIdentifier("\(runID)-\(index)"), nowMilliseconds: now)
            counts[slots.count, default: 0] += 1
        }
        #expect(counts == [1: requests], "viewers by their number of lease slots: \(counts)")
        #expect(await survivor.terminate() == 0)
    }

    /// The loadgen's JSON summary: the last line of its standard output.
    static func summary(_ stdout: [UInt8]) throws -> HTTPLoadReport {
        let lines = String(decoding: stdout, as: UTF8.self).split(separator: "\n")
        let last = try #require(lines.last { $0.hasPrefix("{") }, "no JSON summary in: \(lines.suffix(5))")
        return try JSONDecoder().decode(HTTPLoadReport.self, from: Data(last.utf8))
    }

    /// Requests an edge answered, from its Prometheus text (`ksm_edge_requests_total{...,outcome="answered"}`).
    static func requestsAnswered(_ metrics: String) -> Int {
        metrics.split(separator: "\n").reduce(0) { total, line in
            guard line.hasPrefix("ksm_edge_requests_total{"), line.contains("outcome=\"answered\""), let value = line.split(separator: " ").last
            else { return total }
            return total + (Int(Double(value) ?? 0))
        }
    }
}
