/// Where rotation schedules live, and the viewer counts that size the load at their boundaries.
///
/// Kept apart from ``LicenseStore`` so stores without rotation (the in-memory demo store) need not
/// implement it; ``RedisLicenseStore`` does. Reads here run in a worker's background prefetch
/// task, never per job.
package protocol RotationScheduleStore: Sendable {
    /// Creates or replaces the schedule of (tenant, asset) and indexes its boundary (admin).
    func putRotation(_ schedule: RotationSchedule) async throws(LicenseStoreError)

    /// Removes the schedule of (tenant, asset), if any (admin).
    func removeRotation(tenant: StoreIdentifier, assetID: [UInt8]) async throws(LicenseStoreError)

    /// Every schedule, or one tenant's, ordered by boundary.
    func rotations(tenant: StoreIdentifier?) async throws(LicenseStoreError) -> [RotationSchedule]

    /// The schedules whose boundary lies in `from...through` (ms since 1970), ordered by boundary:
    /// at most two round trips, whatever their number.
    func dueRotations(from: Int64, through: Int64) async throws(LicenseStoreError) -> [RotationSchedule]

    /// For each schedule, the live viewers of its current asset at `nowMilliseconds` (sessions
    /// whose lease has not expired), in one round trip.
    func viewerCounts(_ schedules: [RotationSchedule], nowMilliseconds: Int64) async throws(LicenseStoreError) -> [Int]
}
