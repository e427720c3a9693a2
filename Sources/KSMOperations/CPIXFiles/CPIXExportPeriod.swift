/// One key period of an export, as `--period` gives it: `INDEX`, `INDEX@START` or
/// `INDEX@START/END`, the times xs:dateTime with a time zone (`2026-11-28T12:00:00Z`).
///
/// The index is the period's name in the asset ID, as SPEKE names a period by
/// `ContentKeyPeriod@index`, so an export and a SPEKE request for the same index get the same key.
/// The times, when given, are written as the period's `start` and `end` and make the export write
/// rotation schedules as SPEKE v2.1 issuing does.
package struct CPIXExportPeriod: Sendable, Hashable {
    /// `ContentKeyPeriod@index`.
    package var index: UInt64
    /// `ContentKeyPeriod@start` as written; nil when not given.
    package var start: String?
    /// `ContentKeyPeriod@end` as written; nil when not given.
    package var end: String?

    package init(index: UInt64, start: String? = nil, end: String? = nil) {
        self.index = index
        self.start = start
        self.end = end
    }

    /// Parses `INDEX[@START[/END]]`. The times are checked when the keys are issued, as a SPEKE
    /// request's are.
    /// - Throws: `.invalidArgument` when the index is not a non-negative integer or a part is empty.
    package init(spec: String) throws(CPIXFileError) {
        let usage = "--period takes INDEX, INDEX@START or INDEX@START/END (times as 2026-11-28T12:00:00Z), got \(spec.prefix(120))"
        let halves = spec.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard let index = UInt64(halves[0]) else { throw CPIXFileError(.invalidArgument, usage) }
        guard halves.count == 2 else {
            self.init(index: index)
            return
        }
        let times = halves[1].split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard !times[0].isEmpty, times.count == 1 || !times[1].isEmpty else { throw CPIXFileError(.invalidArgument, usage) }
        self.init(index: index, start: times[0], end: times.count == 2 ? times[1] : nil)
    }

    /// `ContentKeyPeriod@id`: an xs:ID, so it cannot start with a digit.
    var id: String { "keyPeriod_\(index)" }
}
