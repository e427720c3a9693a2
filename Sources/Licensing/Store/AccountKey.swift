/// One account of one tenant: the unit lease slots, device registries and account records belong to,
/// so stores group requests and state by it.
package struct AccountKey: Sendable, Hashable {
    package var tenant: StoreIdentifier
    package var account: StoreIdentifier

    package init(tenant: StoreIdentifier, account: StoreIdentifier) {
        self.tenant = tenant
        self.account = account
    }
}
