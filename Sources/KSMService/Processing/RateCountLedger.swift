import Licensing
import Synchronization

/// The jobs of one worker batch that already counted toward their account's rate limit, so the
/// worker's own retries after a store outage (``LicenseWorker``, up to two) do not count them again.
/// One per batch, shared by its attempts; a job whose first admission never reached Redis is not in
/// it and is counted when it does.
package final class RateCountLedger: Sendable {
    private let counted = Mutex<Set<StoreIdentifier>>([])

    package init() {}

    /// True when the job (by ID) was counted by an earlier attempt.
    package func contains(_ jobID: StoreIdentifier) -> Bool {
        counted.withLock { $0.contains(jobID) }
    }

    /// Notes jobs whose admission counted them.
    package func record(_ jobIDs: some Sequence<StoreIdentifier>) {
        counted.withLock { $0.formUnion(jobIDs) }
    }
}
