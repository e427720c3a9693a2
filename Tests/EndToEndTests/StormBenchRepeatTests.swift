import Foundation
import KSMLoad
import Testing

/// `ksm bench storm --repeat N`: every scenario N times, each run reported, and each scenario's
/// median beside them. A whole repeated storm runs in `StormBenchPinningTests`.
@Suite struct StormBenchRepeatTests {
    @Test("a repeated scenario's median is the middle value, or the mean of the middle two")
    func medianOfRepeatedStorms() {
        #expect(StormScenarioMedian.median([]) == nil)
        #expect(StormScenarioMedian.median([1.3]) == 1.3)
        #expect(StormScenarioMedian.median([1.4, 1.1, 1.2]) == 1.2)
        #expect(StormScenarioMedian.median([1.4, 1.1, 1.2, 1.5]) == 1.3)
    }

    @Test("the chart colours a repeated scenario's runs alike: a run's scenario is its label without the round")
    func chartGroupsRunsByScenario() {
        #expect(StormChart.scenario(of: "class topics, smoothing on, 1 worker, run 2") == "class topics, smoothing on, 1 worker")
        #expect(StormChart.scenario(of: "smoothing on, 1 worker") == "smoothing on, 1 worker")
        #expect(StormChart.scenario(of: "a, run x") == "a, run x")
    }

    @Test("--repeat below 1, or a scenario named twice, is refused before any storm")
    func badRepeatsAreRefused() async throws {
        let chart = NSTemporaryDirectory() + "ksm-repeat-\(getpid()).svg"
        for (arguments, says) in [
            (["--repeat", "0"], "--repeat must be at least 1"),
            (["--scenarios", "on", "off", "on"], "scenario on is named twice"),
        ] {
            let result = try await KSMBinary.run(["bench", "storm", "--chart", chart] + arguments, timeout: .seconds(60))
            #expect(result.status == 64, "\(arguments)")
            #expect(String(decoding: result.stderr, as: UTF8.self).contains(says), "\(arguments): \(String(decoding: result.stderr, as: UTF8.self))")
        }
    }
}
