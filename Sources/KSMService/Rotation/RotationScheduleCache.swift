import Licensing
import Synchronization

/// A worker's copy of the rotation schedules due soon, refreshed by the ``RotationPrefetcher`` on
/// each pass, so a batch can advertise the next boundary without a Redis round trip of its own.
///
/// `Sendable`: the table sits behind a `Mutex`, held only to swap it or to copy it out once a batch.
package final class RotationScheduleCache: Sendable {
    /// A schedule's identity: tenant and current asset ID, both by their bytes (``StoreIdentifier``,
    /// `[UInt8]`), as Redis keys them.
    package struct Key: Sendable, Hashable {
        package var tenant: StoreIdentifier
        package var assetID: [UInt8]

        package init(tenant: StoreIdentifier, assetID: [UInt8]) {
            self.tenant = tenant
            self.assetID = assetID
        }
    }

    private let table = Mutex([Key: RotationSchedule]())

    package init() {}

    /// Replaces every schedule with those of the latest pass (a removed schedule disappears with it).
    package func replace(with schedules: [RotationSchedule]) {
        var next: [Key: RotationSchedule] = [:]
        next.reserveCapacity(schedules.count)
        for schedule in schedules { next[Key(tenant: schedule.tenant, assetID: schedule.assetID)] = schedule }
        table.withLock { $0 = next }
    }

    /// The schedules as of the latest pass (a copy-on-write snapshot: one lock per batch).
    package var snapshot: [Key: RotationSchedule] { table.withLock { $0 } }
}
