/// A job's final reply, to keep so a redelivery of the job is answered with the same bytes.
public struct StoredReply: Sendable, Hashable {
    package var tenant: StoreIdentifier
    package var account: StoreIdentifier
    package var jobID: StoreIdentifier
    /// The reply exactly as it will be published, and the digest of the request it answers.
    package var answer: StoredAnswer
    /// How long to keep it (ms): the redelivery window, not the lease idempotency window.
    package var ttlMilliseconds: Int64

    package init(tenant: StoreIdentifier, account: StoreIdentifier, jobID: StoreIdentifier, answer: StoredAnswer, ttlMilliseconds: Int64) {
        self.tenant = tenant
        self.account = account
        self.jobID = jobID
        self.answer = answer
        self.ttlMilliseconds = ttlMilliseconds
    }
}
