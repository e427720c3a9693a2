/// What the store knows about one job before any RSA work.
package enum Admission: Sendable, Hashable {
    /// The job ID was answered before: the exact reply bytes published then, and the digest of the
    /// request they answered.
    case stored(StoredAnswer)
    /// A new job: the account's job count in the current rate window, this job included (0 when the
    /// request did not count toward the rate, see ``AdmissionRequest/countsTowardRate``).
    case counted(Int)
}
