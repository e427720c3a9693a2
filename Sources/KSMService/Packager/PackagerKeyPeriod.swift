/// A SPEKE key period (`cpix:ContentKeyPeriod`) as the key provider uses it: its index and, from
/// SPEKE v2.1 on, its start and end on the wall clock.
///
/// The period's name in the asset ID is its index in decimal (`11425`); a v2.1 period sent with
/// times only (`START_END_ONLY`) is named by its start, `t<ms since 1970>`. The period's `@id` is
/// not used: it is a name local to one CPIX document, and packagers need not repeat it.
package struct PackagerKeyPeriod: Sendable, Hashable {
    /// `ContentKeyPeriod@index`; nil when the packager sent times only.
    package let index: Int64?
    /// `@start`, ms since 1970; nil when not sent (SPEKE v2.0).
    package let startMilliseconds: Int64?
    /// `@end`, ms since 1970; nil when not sent.
    package let endMilliseconds: Int64?

    /// - Throws: `.invalidRequest` when neither an index nor a start is given, the index or a time is
    ///   negative, or the end is not after the start.
    package init(index: Int64?, startMilliseconds: Int64? = nil, endMilliseconds: Int64? = nil) throws(PackagerKeyIssuerError) {
        guard index != nil || startMilliseconds != nil else {
            throw PackagerKeyIssuerError(.invalidRequest, "a key period needs an index or a start time")
        }
        if let index, index < 0 { throw PackagerKeyIssuerError(.invalidRequest, "key period index \(index) is negative") }
        if let startMilliseconds, startMilliseconds < 0 { throw PackagerKeyIssuerError(.invalidRequest, "key period start is before 1970") }
        if let startMilliseconds, let endMilliseconds, endMilliseconds <= startMilliseconds {
            throw PackagerKeyIssuerError(.invalidRequest, "key period ends at or before its start")
        }
        if let endMilliseconds, endMilliseconds < 0 { throw PackagerKeyIssuerError(.invalidRequest, "key period end is before 1970") }
        self.index = index
        self.startMilliseconds = startMilliseconds
        self.endMilliseconds = endMilliseconds
    }

    /// The name in the asset ID: the index, else `t` and the start.
    package var name: String {
        if let index { return String(index) }
        return "t\(startMilliseconds ?? 0)"
    }

    /// The period's place in its stream's order (the period log's score): the index, else the start.
    package var order: Int64 { index ?? startMilliseconds ?? 0 }
}
