/// The store behind the worker's guards against hostile or repeated input: stored replies (so a
/// redelivered job gets the same bytes), per-account rate counters and the SPC anti-replay window.
///
/// Kept apart from ``LicenseStore`` on purpose: the guards are optional (a worker without them
/// answers without consulting them), every method is one pipelined round trip for a whole batch, and the answers
/// come back in request order. Methods throw only for the batch as a whole, like ``LicenseStore``.
public protocol JobGuardStore: Sendable {
    /// Before any RSA work: each job's stored reply if there is one, else the account's job count in
    /// the current rate window (incremented by this job); and each tenant's ``GuardSettings``.
    /// A job with a stored reply is not counted (a redelivery is not a new request), nor is one whose
    /// request says ``AdmissionRequest/countsTowardRate`` false: it is admitted `.counted(0)`.
    func admit(_ requests: [AdmissionRequest], nowMilliseconds: Int64, rateWindowMilliseconds: Int64) async throws(LicenseStoreError) -> AdmissionBatch

    /// Records each SPC as seen for its window (`SET NX PX`). True when the SPC is new, or was first
    /// seen by the same job ID (a redelivery, not a replay); false for a replay.
    func claim(_ claims: [SPCClaim]) async throws(LicenseStoreError) -> [Bool]

    /// Stores each reply's answer unless one is stored already for that job ID (`SET NX PX`). Nil
    /// when stored; otherwise the answer stored earlier (another worker answered the same job
    /// first), which the caller publishes instead, so every copy of an answer is byte-identical,
    /// or refuses when its request digest differs (the job ID was reused).
    func storeReplies(_ replies: [StoredReply]) async throws(LicenseStoreError) -> [StoredAnswer?]

    /// Creates or replaces a tenant's guard settings (admin).
    func putGuardSettings(_ settings: GuardSettings, tenant: StoreIdentifier) async throws(LicenseStoreError)
}
