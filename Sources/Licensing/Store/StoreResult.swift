/// The answer to one ``StoreRequest``.
public struct StoreResult: Sendable, Hashable {
    /// The tenant record; nil if the tenant is unknown.
    public var tenant: TenantRecord?
    /// The wrapped key for the asset and key period; nil if none is stored.
    public var contentKey: WrappedContentKey?
    /// The policy document as raw JSON bytes: the asset's own if one is stored, else the tenant's
    /// default, else nil. (Its schema is defined elsewhere; the store does not parse it.)
    public var policy: [UInt8]?

    public init(tenant: TenantRecord?, contentKey: WrappedContentKey?, policy: [UInt8]?) {
        self.tenant = tenant
        self.contentKey = contentKey
        self.policy = policy
    }
}
