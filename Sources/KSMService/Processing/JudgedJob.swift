import FairPlay

/// A job the policy judged, its decision not yet applied: held until the batch's reads are complete,
/// so a failed re-read answers it retriable rather than with a decision made on a partial read.
struct JudgedJob: Sendable {
    let opened: OpenedJob
    let key: ContentKeySource
    let evaluation: LicenseEvaluation
    /// True when the decision depends on a rental start the fetch did not read (a token claim set a
    /// rental duration the cached documents did not show): the job is read and judged again.
    let needsRentalStart: Bool
}
