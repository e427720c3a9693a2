import Foundation
import KSMLoad
import OwnedThreads
import Synchronization
import Testing

/// `ksm bench storm` measures only on a quiet host: its figures are CPU shares of the whole machine.
@Suite struct StormBenchHostTests {
    @Test("the busy share is the non-idle ticks over all ticks; steal is counted apart too")
    func busyAndStealFractions() {
        let before = HostTime(total: 1_000, steal: 10, idle: 600)
        let after = HostTime(total: 1_400, steal: 30, idle: 800)
        #expect(after.busyFraction(since: before) == 0.5)
        #expect(after.stealFraction(since: before) == 0.05)
        #expect(before.busyFraction(since: before) == nil)
    }

    @Test("ksm bench storm refuses to start while other work keeps the host's cores busy, saying so")
    func stormRefusesABusyHost() async throws {
        let stop = Atomic<Bool>(false)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        // One spinning thread per core: the host is near 100 % busy whatever else the run is doing.
        let spinners = (0..<cores).map { _ in
            OwnedThread.start(name: "busy") {
                var n = 0
                while !stop.load(ordering: .relaxed) { n &+= 1 }
                _ = n
            }
        }
        defer {
            stop.store(true, ordering: .relaxed)
            for spinner in spinners { spinner.join() }
        }
        let result = try await KSMBinary.run(
            [
                "bench", "storm", "--fixtures", "Fixtures/test-credentials", "--chart",
                NSTemporaryDirectory() + "ksm-busy-\(getpid()).svg", "--scenarios", "on",
            ], timeout: .seconds(120))
        let stderr = String(decoding: result.stderr, as: UTF8.self)
        #expect(result.status != 0)
        #expect(stderr.contains("busy in the second before the storm"), "\(stderr.suffix(2000))")
        #expect(stderr.contains("--allow-busy-host"))
    }
}
