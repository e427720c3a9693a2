/// One job's read from the store: the tenant, the account asking, and the key it wants.
public struct StoreRequest: Sendable, Hashable {
    /// The tenant whose records to read.
    public var tenant: StoreIdentifier
    /// The account asking: the one whose per-account records (rental start, offline records) are read.
    public var account: StoreIdentifier
    /// The FairPlay asset ID (the SPC's asset ID, from the `skd://` URI), as bytes.
    public var assetID: [UInt8]
    /// The key period of a rotating live stream; nil names the asset's single key.
    public var keyPeriod: StoreIdentifier?
    /// Which mutable per-account records to read in the same round trip. Default: none.
    package var accountReads: AccountReads

    package init(tenant: StoreIdentifier, account: StoreIdentifier, assetID: [UInt8], keyPeriod: StoreIdentifier? = nil, accountReads: AccountReads = []) {
        self.tenant = tenant
        self.account = account
        self.assetID = assetID
        self.keyPeriod = keyPeriod
        self.accountReads = accountReads
    }
}
