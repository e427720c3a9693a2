/// What the store knows about one job before any RSA work.
public enum Admission: Sendable, Hashable {
    /// The job was answered before: these are the exact reply bytes published then.
    case stored([UInt8])
    /// A new job: the account's job count in the current rate window, this job included (0 when the
    /// request did not count toward the rate, see ``AdmissionRequest/countsTowardRate``).
    case counted(Int)
}
