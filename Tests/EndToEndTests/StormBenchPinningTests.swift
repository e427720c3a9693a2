import Foundation
import KSMLoad
import OwnedThreads
import Testing

/// `ksm bench storm --worker-cpus`: the workers on CPUs of their own, the harness on the rest, the
/// baseline on the workers' CPUs.
@Suite(.timeLimit(.minutes(5))) struct StormBenchPinningTests {
    @Test("a CPU list takes numbers and ranges, and names the part it cannot read")
    func cpuListsParse() throws {
        #expect(try CPUAffinity.parseList("0") == [0])
        #expect(try CPUAffinity.parseList("2,0") == [0, 2])
        #expect(try CPUAffinity.parseList("1-3,0-1") == [0, 1, 2, 3])
        for bad in ["", "a", "3-1", "-1", "0,,1", "1-"] {
            #expect(throws: CPUAffinity.InvalidList.self, "\(bad)") { try CPUAffinity.parseList(bad) }
        }
        #expect(throws: CPUAffinity.InvalidList.self) { try CPUAffinity.parseList("0-x") }
    }

    @Test("the workers' CPUs must be ones this process may use, and must leave one for the harness")
    func pinningLeavesTheHarnessACPU() throws {
        let pinning = try CPUPinning(workerCPUs: "0", allowed: [0, 1])
        #expect(pinning.workerCPUs == [0] && pinning.harnessCPUs == [1])
        do {
            _ = try CPUPinning(workerCPUs: "0-1", allowed: [0, 1])
            Issue.record("every CPU to the workers was accepted")
        } catch {
            #expect(error.description.contains("leaves no CPU"), "\(error)")
        }
        do {
            _ = try CPUPinning(workerCPUs: "0,5", allowed: [0, 1])
            Issue.record("a CPU outside the allowed set was accepted")
        } catch {
            #expect(error.description.contains("CPU 5 is not one"), "\(error)")
        }
    }

    @Test("ksm bench storm refuses --worker-cpus that leave the harness no CPU, before any storm")
    func stormRefusesEveryCPUToTheWorkers() async throws {
        let allowed = try #require(CPUAffinity.allowedCPUs())
        let result = try await KSMBinary.run(
            [
                "bench", "storm", "--worker-cpus", CPUAffinity.listText(allowed), "--allow-busy-host",
                "--chart", NSTemporaryDirectory() + "ksm-pin-all-\(getpid()).svg",
            ], timeout: .seconds(60))
        #expect(result.status != 0)
        #expect(String(decoding: result.stderr, as: UTF8.self).contains("leaves no CPU for Redis, the broker and the client"))
    }

    /// A small storm, pinned and repeated: the bench checks each worker's CPUs in `/proc` and fails
    /// otherwise, so a run that ends well with the CPUs in its figures ran where it says.
    @Test(
        "a pinned storm runs its workers on their CPUs and says so in its figures; repeated, each run is reported and the scenario's median beside them",
        .enabled(if: (CPUAffinity.allowedCPUs()?.count ?? 0) >= 2, "needs two CPUs"))
    func pinnedStormRecordsItsCPUs() async throws {
        let allowed = try #require(CPUAffinity.allowedCPUs())
        let chart = NSTemporaryDirectory() + "ksm-pin-\(getpid()).svg"
        defer {
            try? FileManager.default.removeItem(atPath: chart)
            try? FileManager.default.removeItem(atPath: chart.replacingOccurrences(of: ".svg", with: ".json"))
        }
        let result = try await KSMBinary.run(
            [
                "bench", "storm", "--fixtures", "Fixtures/test-credentials", "--viewers", "30", "--joiners", "30",
                "--scenarios", "classes", "--repeat", "2", "--worker-cpus", "\(allowed[0])", "--allow-busy-host", "--chart", chart,
            ],
            timeout: .seconds(240))
        #expect(result.status == 0, "\(String(decoding: result.stderr, as: UTF8.self).suffix(3000))")
        let figures = try JSONDecoder().decode(StormRun.Output.self, from: Data(result.stdout))
        #expect(figures.workerCPUs == [allowed[0]])
        #expect(figures.harnessCPUs == Array(allowed.dropFirst()))
        #expect(figures.runs.count == 2 && figures.runs.allSatisfy(\.allCorrect))
        let label = "class topics, smoothing on, 1 worker"
        #expect(figures.runs.map(\.label) == ["\(label), run 1", "\(label), run 2"])
        let median = try #require(figures.medians?[label], "\(String(describing: figures.medians))")
        #expect(median.runs == figures.runs.map(\.label))
        let ratios = figures.runs.compactMap { figures.newDrainOverIdeal?[$0.label] }
        #expect(ratios.count == 2 && median.newDrainOverIdeal == StormScenarioMedian.median(ratios))
    }
}
