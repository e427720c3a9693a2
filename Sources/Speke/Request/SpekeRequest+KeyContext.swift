/// What the issuing side asks of a request per key: which rules name it, which crypto periods it
/// belongs to (a rotating key is issued per period; "the KID ... stays the same for any given
/// content ID and key period").
extension SpekeRequest {
    /// The usage rules naming `kid`, in document order.
    package func usageRules(for kid: KID) -> [ContentKeyUsageRule] {
        usageRules.filter { $0.kid == kid }
    }

    /// The periods `kid`'s rules filter on, in the period list's order; empty when its rules name
    /// no period (VOD, or a live request without rotation).
    package func periods(for kid: KID) -> [ContentKeyPeriod] {
        let ids = Set(usageRules(for: kid).flatMap(\.periodIDs))
        return periods.filter { ids.contains($0.id) }
    }
}
