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
        // 0.25 s of CPU time on the pool's one thread, however busy the machine (the thread's own
        // clock, not the wall clock: under a loaded test run the thread is not always running).
        _ = await pool.run {
            func threadCPU() -> Double {
                var spec = timespec()
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
                return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
            }
            let end = threadCPU() + 0.25
            var x: UInt64 = 1
            while threadCPU() < end { x = x &* 6_364_136_223_846_793_005 &+ 1 }
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
