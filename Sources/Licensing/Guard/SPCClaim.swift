/// One SPC to remember for a tenant's anti-replay window.
///
/// Keyed by (tenant, transaction ID, SHA-256 of the whole SPC): a device makes a fresh SPC (new
/// random key, new transaction ID) for every request, so the same pair means the same bytes sent
/// again. The job ID is stored as the value so a redelivered job is told apart from a replay.
public struct SPCClaim: Sendable, Hashable {
    package var tenant: StoreIdentifier
    package var jobID: StoreIdentifier
    /// The SPC's transaction ID TLLV; nil when the SPC carries none.
    package var transactionID: UInt64?
    /// SHA-256 of the SPC bytes as received.
    package var digest: [UInt8]
    /// How long to remember it (ms, > 0).
    package var windowMilliseconds: Int64

    package init(tenant: StoreIdentifier, jobID: StoreIdentifier, transactionID: UInt64?, digest: [UInt8], windowMilliseconds: Int64) {
        self.tenant = tenant
        self.jobID = jobID
        self.transactionID = transactionID
        self.digest = digest
        self.windowMilliseconds = windowMilliseconds
    }
}
