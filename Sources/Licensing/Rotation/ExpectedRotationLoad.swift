/// The license requests expected at the rotation boundaries within a horizon: the number an
/// autoscaler watches (`ksm_expected_rotation_load`) to add workers before a storm, not after it.
///
/// Every live viewer of a rotating stream asks for each next key when the boundary comes, so the
/// load is the sum, over the schedules due within the horizon, of live viewers (active lease slots
/// of the current asset) times the keys each viewer needs (``RotationSchedule/keysPerViewer``).
/// Viewers that play without a lease are not counted: the count is a lower bound for such streams.
package enum ExpectedRotationLoad {
    /// Sums viewers x keys over `schedules` whose boundary lies in `now...now + horizon`.
    /// - Parameters:
    ///   - viewers: one count per schedule, in the same order (``RotationScheduleStore/viewerCounts(_:nowMilliseconds:)``);
    ///     missing or negative counts count as zero.
    /// - Returns: the expected requests, saturating at `Int.max` rather than trapping.
    package static func requests(schedules: [RotationSchedule], viewers: [Int], nowMilliseconds: Int64, horizonMilliseconds: Int64) -> Int {
        var total = 0
        for (index, schedule) in schedules.enumerated() {
            guard schedule.boundaryMilliseconds >= nowMilliseconds, schedule.boundaryMilliseconds - nowMilliseconds <= horizonMilliseconds else { continue }
            let count = index < viewers.count ? max(0, viewers[index]) : 0
            let (product, overflow1) = count.multipliedReportingOverflow(by: max(1, schedule.keysPerViewer))
            let (sum, overflow2) = total.addingReportingOverflow(product)
            if overflow1 || overflow2 { return Int.max }
            total = sum
        }
        return total
    }
}
