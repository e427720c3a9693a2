/// The answer to one ``StoreRequest``.
///
/// Policies come back per layer, unparsed, so the worker can stack them (``PolicyLayers``) and
/// parse each distinct document once per batch.
public struct StoreResult: Sendable, Hashable {
    /// The tenant record; nil if the tenant is unknown.
    package var tenant: TenantRecord?
    /// The wrapped key for the asset and key period; nil if none is stored.
    package var contentKey: WrappedContentKey?
    /// The tenant's default policy document (raw JSON bytes), if stored.
    public var tenantPolicy: [UInt8]?
    /// The asset's override document, if stored.
    public var assetPolicy: [UInt8]?
    /// The key period's override document, if the request named a period and one is stored.
    public var keyPeriodPolicy: [UInt8]?
    /// When the account's rental of this asset started (epoch ms): nil when it has not started
    /// or was not asked for (see ``rentalStartRead``).
    public var rentalStartedAt: Int64?
    /// True when ``rentalStartedAt`` was read (the request asked for ``AccountReads/rentalStart``).
    public var rentalStartRead: Bool
    /// The account's offline license records, when asked for (``AccountReads/offlineRecords``).
    package var offlineRecords: [OfflineLicenseRecord]

    package init(
        tenant: TenantRecord?, contentKey: WrappedContentKey?, tenantPolicy: [UInt8]? = nil, assetPolicy: [UInt8]? = nil, keyPeriodPolicy: [UInt8]? = nil,
        rentalStartedAt: Int64? = nil, rentalStartRead: Bool = false, offlineRecords: [OfflineLicenseRecord] = []
    ) {
        self.tenant = tenant
        self.contentKey = contentKey
        self.tenantPolicy = tenantPolicy
        self.assetPolicy = assetPolicy
        self.keyPeriodPolicy = keyPeriodPolicy
        self.rentalStartedAt = rentalStartedAt
        self.rentalStartRead = rentalStartRead
        self.offlineRecords = offlineRecords
    }

    /// True when some layer holds a document (the worker fails closed without one).
    public var hasPolicy: Bool { tenantPolicy != nil || assetPolicy != nil || keyPeriodPolicy != nil }
}
