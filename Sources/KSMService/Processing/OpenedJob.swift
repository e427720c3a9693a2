import FairPlay

/// A job whose SPC opened (the open stage's product): from here on every reply names its asset ID and HU.
struct OpenedJob: Sendable {
    /// The job's place in the batch (``BatchReplies/jobs``).
    let index: Int
    let request: SPCRequest
}
