/// One set-if-absent write of a key provider (``PackagerKeyStore/claimContentKeys(_:)``): the key
/// to store for an asset unless one is there already, and the asset's policy unless it has one.
///
/// Both parts are "if absent" so that two provider instances answering the same packager request at
/// once, or a retry, converge on one stored key: the first write wins and every caller reads it
/// back. A key or policy an operator stored first (`ksm admin put-key`, `put-policy`) wins too.
package struct ContentKeyClaim: Sendable, Hashable {
    /// The tenant whose records are written.
    package var tenant: StoreIdentifier
    /// The asset ID exactly as the SPC will carry it (the `skd://` URI's bytes).
    package var assetID: [UInt8]
    /// The wrapped key to store when the asset has none; nil stores no key (the tenant's key seed
    /// derives it) and only reads back what is stored.
    package var candidate: WrappedContentKey?
    /// The policy document (raw JSON) to store as the asset's when it has none; nil writes none.
    package var policy: [UInt8]?

    package init(tenant: StoreIdentifier, assetID: [UInt8], candidate: WrappedContentKey?, policy: [UInt8]?) {
        self.tenant = tenant
        self.assetID = assetID
        self.candidate = candidate
        self.policy = policy
    }
}
