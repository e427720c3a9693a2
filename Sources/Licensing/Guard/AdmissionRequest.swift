/// One job asking to be admitted: who sends it and its job ID (the key of its stored reply).
public struct AdmissionRequest: Sendable, Hashable {
    public var tenant: StoreIdentifier
    public var account: StoreIdentifier
    public var jobID: StoreIdentifier
    /// False when the caller knows the tenant sets no rate limit: only the stored reply is looked up
    /// (one plain `GET` instead of a script), and the admission reports a count of 0.
    public var countsTowardRate: Bool

    public init(tenant: StoreIdentifier, account: StoreIdentifier, jobID: StoreIdentifier, countsTowardRate: Bool = true) {
        self.tenant = tenant
        self.account = account
        self.jobID = jobID
        self.countsTowardRate = countsTowardRate
    }
}
