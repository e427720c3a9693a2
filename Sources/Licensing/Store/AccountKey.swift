/// One account of one tenant: the unit lease slots, device registries and account records belong to,
/// so stores group requests and state by it.
public struct AccountKey: Sendable, Hashable {
    public var tenant: StoreIdentifier
    public var account: StoreIdentifier

    public init(tenant: StoreIdentifier, account: StoreIdentifier) {
        self.tenant = tenant
        self.account = account
    }
}
