/// Whether a downloaded (persistable) content key may be kept by the device, and for how long
/// (guide table 5-1).
///
/// JSON: `"none"`, `"unlimited"` or `"rental-duration"`.
package enum PersistencePolicy: String, Hashable, Sendable, CaseIterable {
    /// No persistable key: a download request is refused unless offline terms are enabled.
    case none
    /// The device may keep the key with no expiry (key type `0x3df2d9fb`); a rental window that
    /// closes still bounds it, see ``PolicyEngine``.
    case unlimited
    /// The device may keep the key for the rental duration (key type `0x18f06048`).
    case limitedToRental = "rental-duration"
}
