/// A closed-loop run's rate once its pipeline is full: the events between the 10th and the 90th
/// percentile of their times, over that span. A run's start (the pipeline filling: first fetches,
/// first batches) and its end (the last requests draining with nothing behind them) hold the fleet
/// below its capacity and weigh on a short run's whole-run rate; this leaves them out, so `bench
/// e2e` and `bench http` report the rate a fleet sustains, whatever the run's length.
package enum SteadyRate {
    /// - Parameters:
    ///   - seconds: each event's time (any origin), in any order.
    ///   - whole: the rate to report when the middle span is empty (too few events, or all at once).
    package static func perSecond(_ seconds: [Double], whole: Double) -> Double {
        let sorted = seconds.sorted()
        let (low, high) = (sorted.count / 10, sorted.count * 9 / 10)
        guard high > low, sorted[high] > sorted[low] else { return whole }
        return Double(high - low) / (sorted[high] - sorted[low])
    }
}
