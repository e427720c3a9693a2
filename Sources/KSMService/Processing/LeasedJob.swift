import Licensing

/// An issued job whose account write, if its decision needs one, was made and did not refuse it.
struct LeasedJob: Sendable {
    let issued: IssuedJob
    /// What the write did (granted, renewed, held or recorded); nil when the decision needs no write.
    let lease: LeaseResult?
}
