import Licensing

/// Decides a successful reply's ``NextKeyAdvice``: the asset's next boundary from the worker's
/// ``RotationScheduleCache``, and this viewer's place in the ``PrefetchWindow`` before it.
package struct PrefetchAdvisor: Sendable {
    package var window: PrefetchWindow
    package var schedules: RotationScheduleCache

    package init(window: PrefetchWindow, schedules: RotationScheduleCache) {
        self.window = window
        self.schedules = schedules
    }

    /// The advice for one viewer of `assetID`, from `snapshot` (``RotationScheduleCache/snapshot``,
    /// read once per batch); nil when the asset has no schedule, the window is closed, or the job
    /// already asked for the next key period (its `keyPeriod` is the schedule's next one).
    package func advice(
        in snapshot: [RotationScheduleCache.Key: RotationSchedule], tenant: StoreIdentifier, account: StoreIdentifier, assetID: [UInt8],
        keyPeriod: StoreIdentifier?, viewerSession: [UInt8], nowMilliseconds: Int64
    ) -> NextKeyAdvice? {
        guard window.isEnabled, !snapshot.isEmpty,
            let schedule = snapshot[RotationScheduleCache.Key(tenant: tenant, assetID: assetID)]
        else { return nil }
        if let keyPeriod, keyPeriod == schedule.nextPeriod, keyPeriod != schedule.currentPeriod { return nil }
        let viewer = PrefetchWindow.ViewerIdentity(tenant: tenant.value, account: account.value, session: viewerSession)
        guard let fetchAt = window.fetchTime(boundaryMilliseconds: schedule.boundaryMilliseconds, viewer: viewer, nowMilliseconds: nowMilliseconds)
        else { return nil }
        return NextKeyAdvice(boundaryMilliseconds: schedule.boundaryMilliseconds, fetchAtMilliseconds: fetchAt)
    }
}
