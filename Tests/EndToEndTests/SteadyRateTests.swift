import KSMLoad
import Testing

/// How `bench e2e` and `bench http` take a closed loop's sustained rate from its answers' times.
@Suite struct SteadyRateTests {
    @Test func aSlowStartAndDrainDoNotLowerTheSteadyRate() {
        // 100 answers: 5 over the first second (the pipeline filling), 90 at 100 per second, 5 over
        // the last (draining). Over the whole run that is 100 in 2.7 s; in the middle, 100/s.
        let filling = (0..<5).map { Double($0) * 0.2 }
        let steady = (0..<90).map { 1.0 + Double($0) * 0.01 }
        let draining = (0..<5).map { 1.9 + Double($0) * 0.2 }
        let times = (draining + steady + filling)
        let rate = SteadyRate.perSecond(times, whole: 100 / 2.7)
        #expect(abs(rate - 100) < 1)
    }

    @Test func tooFewAnswersFallBackToTheWholeRunRate() {
        #expect(SteadyRate.perSecond([], whole: 7) == 7)
        #expect(SteadyRate.perSecond([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], whole: 12) == 12)
    }
}
