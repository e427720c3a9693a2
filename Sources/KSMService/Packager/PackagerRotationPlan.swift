import Licensing

/// What to write to the rotation schedules of one track of a live stream after a key period was
/// recorded in its log: a pure decision over the log, so the rule is tested without a store.
///
/// Each schedule goes from one period's key to the next period's key of the same track type,
/// keyed by the current key's asset ID, as `ksm admin put-rotation --asset <current>
/// --next-asset <next> --boundary <ms>` writes it. The boundary is the next period's `@start`, or
/// the current period's `@end` (SPEKE v2.1). Periods without times (SPEKE v2.0) give no boundary
/// and so no schedule: the times at which a packager first asks for each index are spaced by the
/// cadence, but they precede each boundary by the packager's lead time, which no request states,
/// so no boundary can be inferred from them (docs/key-seeds.md).
package struct PackagerRotationPlan: Sendable, Hashable {
    /// Schedules to create or replace, each with its boundary still ahead.
    package var put: [RotationSchedule] = []
    /// Current asset IDs whose schedule's boundary has passed: removed to keep the index small.
    package var remove: [[UInt8]] = []

    package init(put: [RotationSchedule] = [], remove: [[UInt8]] = []) {
        self.put = put
        self.remove = remove
    }

    /// The plan after `entry` was recorded in `log` (oldest first, `entry` included unless the log
    /// trimmed it). Schedules touching `entry` (from the period before it, and to the one after it)
    /// are written when their boundary is after `nowMilliseconds`; when the log `changed`, every
    /// pair whose boundary has passed is removed.
    package static func after(
        recording entry: PackagerPeriodEntry, log: [PackagerPeriodEntry], changed: Bool, tenant: StoreIdentifier, nowMilliseconds: Int64
    ) -> PackagerRotationPlan {
        var plan = PackagerRotationPlan()
        let sorted = log.sorted { $0.order < $1.order }
        for (current, next) in zip(sorted, sorted.dropFirst()) {
            guard let boundary = next.startMilliseconds ?? current.endMilliseconds else { continue }
            if boundary > nowMilliseconds {
                if current.order == entry.order || next.order == entry.order {
                    plan.put.append(RotationSchedule(tenant: tenant, assetID: current.assetID, nextAssetID: next.assetID, boundaryMilliseconds: boundary))
                }
            } else if changed {
                plan.remove.append(current.assetID)
            }
        }
        return plan
    }
}
