import FairPlay
import FairPlayDevice
import Foundation
import KSMTestSupport
import Testing
import Wire

/// The README's player lines, run exactly as written: each `curl` line of its request-shapes block,
/// with only the example host replaced by a real `ksm edge` (started as the README starts it, with
/// `--redis-url`) in front of a fleet (`ksm broker`'s mock cluster, a real redis-server, `ksm serve`).
/// The certificate line must fetch the DER the simulated device builds its SPC for, and every
/// license line's answer must hold a CKC the device opens.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct EdgeCurlLinesTests {
    static let exampleHost = "https://edge.example.com"

    /// The README's fenced block that begins with the certificate line, one command per line.
    static func readmeLines() throws -> [String] {
        let readme = try String(contentsOf: KSMBinary.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "\n```")[0] }
        let block = try #require(blocks.first { $0.hasPrefix("curl -fsS -o fps.cer \(exampleHost)/fps/") }, "README has no request-shapes block")
        return block.split(separator: "\n").map(String.init)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl"), "curl is not installed"))
    func everyREADMECurlLineGetsAnAnswerTheDeviceOpens() async throws {
        let lines = try Self.readmeLines()
        #expect(lines.count == 6, "\(lines)")
        let fleet = try await Fleet(maxStreams: 8, streams: 1, periods: 1)
        #expect(fleet.catalog.tenant == "demo", "the README's lines name the demo tenant")
        try await fleet.startWorker()
        let (edge, port) = try await EdgeServiceTests.startEdge(fleet: fleet, deadlineSeconds: "10", extraArguments: ["--redis-url", fleet.redisURL])
        defer { edge.kill() }
        let client = try await FleetClient(fleet: fleet)
        defer { Task { await client.close() } }
        let device = SimulatedDevice(trust: client.trust)

        var shapesAnswered: [String] = []
        for (index, line) in lines.enumerated() {
            #expect(line.contains(Self.exampleHost), "\(line)")
            let command = line.replacingOccurrences(of: Self.exampleHost, with: "http://127.0.0.1:\(port)")
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ksm-curl-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let (spc, session) = try EdgeServiceTests.spc(fleet: fleet, device: device, session: UInt64(100 + index))
            try Data(spc).write(to: directory.appendingPathComponent("spc.bin"))

            let run = try await ProcessRunner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", command], currentDirectory: directory, timeout: .seconds(60))
            #expect(run.status == 0, "\(line): \(run.stderrText)")
            let output = run.stdout
            if line.contains("/certificate") {
                let fetched = try Data(contentsOf: directory.appendingPathComponent("fps.cer"))
                // The certificate FleetClient's device trust is built from, so the one each SPC is made for.
                let certificate = try Data(contentsOf: KSMBinary.packageRoot.appendingPathComponent("Fixtures/test-credentials/test_certificate.der"))
                #expect(fetched == certificate, "the certificate endpoint returned other bytes than the SPC's certificate")
                continue
            }
            let ckc: [UInt8]
            if line.contains("-o ckc.bin") {
                ckc = Array(try Data(contentsOf: directory.appendingPathComponent("ckc.bin")))
                shapesAnswered.append("raw")
            } else if line.contains("fairplay-streaming-request") {
                let json = try JSONSerialization.jsonObject(with: Data(output)) as? [String: Any]
                let keys = (json?["fairplay-streaming-response"] as? [String: Any])?["streaming-keys"] as? [[String: Any]]
                let text = try #require(keys?.first?["ckc"] as? String, "\(String(decoding: output, as: UTF8.self))")
                ckc = try #require(Base64.decode(Array(text.utf8)))
                #expect(keys?.first?["id"] as? Int == 1)
                shapesAnswered.append("apple")
            } else if line.contains("application/json") {
                let json = try JSONSerialization.jsonObject(with: Data(output)) as? [String: Any]
                let text = try #require(json?["ckc"] as? String, "\(String(decoding: output, as: UTF8.self))")
                ckc = try #require(Base64.decode(Array(text.utf8)))
                shapesAnswered.append("json")
            } else {
                ckc = try #require(Base64.decode(output), "\(line): \(String(decoding: output.prefix(200), as: UTF8.self))")
                shapesAnswered.append(line.contains("spc=") ? "form" : "base64")
            }
            let opened = try CKCOpener.open(ckc, session: session)
            #expect(opened.contentKey.count == 16, "\(line)")
        }
        #expect(shapesAnswered.sorted() == ["apple", "base64", "form", "json", "raw"])
    }
}
