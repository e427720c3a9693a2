import Foundation
import KSMService
import Testing

@Suite("CPU accounting for benchmarks")
struct CPUAccountTests {
    @Test("groups threads by the names the crypto pool and librdkafka give them")
    func components() {
        #expect(CPUAccount.component(ofThread: "ksm-crypto-0") == "crypto")
        #expect(CPUAccount.component(ofThread: "rdk:mock") == "kafka-broker")
        #expect(CPUAccount.component(ofThread: "rdk:broker1") == "kafka-client")
        #expect(CPUAccount.component(ofThread: "rdk:main") == "kafka-client")
        #expect(CPUAccount.component(ofThread: "oot.default-qos") == "swift")
    }

    @Test("charges a busy crypto pool thread to crypto, and differences and per-job figures add up")
    func chargesCryptoThreads() async {
        let pool = CryptoPool(threadCount: 1)
        defer { pool.shutdown() }
        let before = CPUAccount.sample()
        // About 0.3 s of pure CPU on the pool's one thread.
        _ = await pool.run {
            let end = ContinuousClock.now + .milliseconds(300)
            var x: UInt64 = 1
            while ContinuousClock.now < end { x = x &* 6364136223846793005 &+ 1 }
            return x
        }
        let spent = CPUAccount.sample() - before
        #if os(Linux)
        #expect((spent.seconds["crypto"] ?? 0) >= 0.2, "\(spent.seconds)")
        let perJob = spent.microsecondsPerJob(1_000)
        #expect(perJob["total"] == (spent.seconds.values.reduce(0, +) / 1_000 * 1e6).rounded())
        #endif
    }

    @Test("counts another process's CPU time under the given name")
    func countsOtherProcesses() {
        #if os(Linux)
        let own = getpid()
        let sample = CPUAccount.sample(processes: ["self": [own], "gone": [Int32.max]])
        #expect((sample.seconds["self"] ?? -1) >= 0)
        #expect(sample.seconds["gone"] == nil)
        #endif
    }
}
