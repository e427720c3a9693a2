import Synchronization

/// The prefetcher's latest figures, readable synchronously by a metrics scrape.
///
/// `Sendable`: the snapshot sits behind a `Mutex`, held only to copy it in or out.
public final class RotationStatus: Sendable {
    /// One pass's outcome.
    public struct Snapshot: Sendable, Hashable {
        /// License requests expected at the boundaries within the lead time (``ExpectedRotationLoad``).
        package var expectedLoad: Int = 0
        /// Schedules due within the lead time at the last pass.
        package var dueSchedules: Int = 0
        /// Keys read ahead since start.
        package var keysPrefetched: Int = 0
        /// Passes that failed (Redis unavailable) since start; the next pass retries.
        package var failedPasses: Int = 0
        /// Wall clock of the last successful pass (ms since 1970); 0 before the first.
        package var lastPassMilliseconds: Int64 = 0
        package init() {}
    }

    private let state = Mutex(Snapshot())

    package init() {}

    package var snapshot: Snapshot { state.withLock { $0 } }

    func update(_ body: (inout Snapshot) -> Void) { state.withLock { body(&$0) } }
}
