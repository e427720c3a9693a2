/// One job asking to be admitted: who sends it and its job ID (the key of its stored reply).
public struct AdmissionRequest: Sendable, Hashable {
    package var tenant: StoreIdentifier
    package var account: StoreIdentifier
    package var jobID: StoreIdentifier
    /// False when the caller knows the tenant sets no rate limit: only the stored reply is looked up
    /// (one plain `GET` instead of a script), and the admission reports a count of 0.
    package var countsTowardRate: Bool
    /// False when the caller knows no reply can be stored for this job yet: its message is on its
    /// first delivery (past the partition's log end when the worker was assigned it). The store may
    /// then skip the lookup and report the job as not stored; with no rate to count there is nothing
    /// to ask Redis at all. Storing the reply (`SET NX GET`) still keeps copies identical.
    package var mayHaveStoredReply: Bool

    /// Whether the store has anything to do for this request: a rate to count or a reply to look up.
    package var needsStore: Bool { countsTowardRate || mayHaveStoredReply }

    package init(tenant: StoreIdentifier, account: StoreIdentifier, jobID: StoreIdentifier, countsTowardRate: Bool = true, mayHaveStoredReply: Bool = true) {
        self.tenant = tenant
        self.account = account
        self.jobID = jobID
        self.countsTowardRate = countsTowardRate
        self.mayHaveStoredReply = mayHaveStoredReply
    }
}
