/// The mutable per-account records a ``StoreRequest`` asks for beside tenant, key and policies.
///
/// They are read in the same round trip as the rest, and never cached (``CachingLicenseStore``
/// forwards them to its inner store on every call): they change with every license.
package struct AccountReads: OptionSet, Sendable, Hashable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// When the account's rental of the asset started (``StoreResult/rentalStartedAt``).
    package static let rentalStart = AccountReads(rawValue: 1 << 0)
    /// The account's offline license records (``StoreResult/offlineRecords``), for sync SPCs.
    package static let offlineRecords = AccountReads(rawValue: 1 << 1)
}
