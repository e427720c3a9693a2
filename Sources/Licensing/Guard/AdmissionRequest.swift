/// One job asking to be admitted: who sends it and its job ID (the key of its stored reply).
public struct AdmissionRequest: Sendable, Hashable {
    public var tenant: StoreIdentifier
    public var account: StoreIdentifier
    public var jobID: StoreIdentifier

    public init(tenant: StoreIdentifier, account: StoreIdentifier, jobID: StoreIdentifier) {
        self.tenant = tenant
        self.account = account
        self.jobID = jobID
    }
}
