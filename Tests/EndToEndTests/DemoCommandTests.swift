import Foundation
import Testing

/// `ksm demo` is a newcomer's first run: it must show what happened and nothing else. Several
/// workers in one process leave the group one after another, the case in which librdkafka's commit
/// on close meets a rebalance; and each Kafka client must get only the properties it reads. The
/// devices ask the demo's edge over HTTP, in every request shape, and the edge stops before the
/// workers, answering what is in flight.
@Suite struct DemoCommandTests {
    @Test("a short demo answers every viewer and prints no warning or error")
    func demoPrintsNoWarning() async throws {
        let result = try await KSMBinary.run(["demo", "--viewers", "60", "--rotations", "1"], timeout: .seconds(300))
        let stdout = String(decoding: result.stdout, as: UTF8.self)
        let stderr = String(decoding: result.stderr, as: UTF8.self)
        #expect(result.status == 0, "\(stdout.suffix(2000))\n\(stderr.suffix(2000))")
        #expect(stdout.contains("result:           every reply correct"), "\(stdout.suffix(2000))")
        #expect(stdout.contains("through the edge: HTTP POST http://127.0.0.1:"), "\(stdout.suffix(2000))")
        // 60 joins and 60 renewals, the five shapes in turn.
        #expect(stdout.contains("request shapes:   raw 24, base64 24, form 24, json 24, apple 24"), "\(stdout.suffix(2000))")
        #expect(stdout.contains("replies:          120 (120 correct"), "\(stdout.suffix(2000))")
        let noisy = (stdout + "\n" + stderr).split(separator: "\n").filter {
            let line = $0.lowercased()
            return line.contains("warning") || line.contains("error")
        }
        #expect(noisy.isEmpty, "\(noisy.prefix(10).joined(separator: "\n"))")
    }
}
