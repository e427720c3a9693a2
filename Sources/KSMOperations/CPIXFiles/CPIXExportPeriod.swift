import Speke

/// One key period of an export, as `--period` gives it: `INDEX`, `START[/END]` or
/// `INDEX@START[/END]`, the times xs:dateTime with a time zone (`2026-11-28T12:00:00Z`).
///
/// Each form is one of the ways a SPEKE packager names a period (MediaPackage's
/// `ContentKeyPeriodTiming`), and the period's key is named in its asset ID as SPEKE issuing names
/// it, so an export and a SPEKE request naming the period the same way get the same key:
/// - `INDEX` (`INDEX_ONLY`): the index, `skd://<content>/<index>/<kid>`.
/// - `START[/END]` (`START_END_ONLY`): `t` and the start in ms since 1970. The document carries the
///   times alone, as CPIX 2.3 readers that hold index and times exclusive (Unified Streaming's)
///   want them.
/// - `INDEX@START[/END]` (`INDEX_WITH_START_END`): named by the index; the document carries both.
///
/// Times make the export write rotation schedules, as SPEKE v2.1 issuing does.
package struct CPIXExportPeriod: Sendable, Hashable {
    /// `ContentKeyPeriod@index`; nil for a period given by its times.
    package var index: UInt64?
    /// `ContentKeyPeriod@start` as written; nil when not given.
    package var start: String?
    /// `ContentKeyPeriod@end` as written; nil when not given.
    package var end: String?

    /// A period needs an index or a start (``name()`` checks it).
    package init(index: UInt64?, start: String? = nil, end: String? = nil) {
        self.index = index
        self.start = start
        self.end = end
    }

    /// Parses `INDEX`, `START[/END]` or `INDEX@START[/END]`. The times are read when the keys are
    /// issued, as a SPEKE request's are.
    /// - Throws: `.invalidArgument` when the index is not a non-negative integer or a part is empty.
    package init(spec: String) throws(CPIXFileError) {
        let usage =
            "--period takes INDEX, START[/END] or INDEX@START[/END] (times as 2026-11-28T12:00:00Z), got \(spec.prefix(120))"
        if let index = UInt64(spec) {
            self.init(index: index)
            return
        }
        let halves = spec.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        var index: UInt64? = nil
        if halves.count == 2 {
            guard let value = UInt64(halves[0]) else { throw CPIXFileError(.invalidArgument, usage) }
            index = value
        }
        let times = halves[halves.count - 1].split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        // A bare number is an index (taken above); times hold a date.
        guard !times[0].isEmpty, times[0].contains("-"), times.count == 1 || !times[1].isEmpty else {
            throw CPIXFileError(.invalidArgument, usage)
        }
        self.init(index: index, start: times[0], end: times.count == 2 ? times[1] : nil)
    }

    /// The period as a SPEKE request's `ContentKeyPeriod` with the id `id`.
    func contentKeyPeriod(id: String) -> ContentKeyPeriod {
        ContentKeyPeriod(id: id, index: index, start: start, end: end)
    }

    /// The period's name in the asset ID, as SPEKE issuing names it: the index, else `t` and the
    /// start in ms since 1970.
    /// - Throws: `.invalidArgument` for a time that is not an xs:dateTime with a time zone, an end
    ///   not after the start, a period with neither index nor start.
    package func name() throws(CPIXFileError) -> String {
        do throws(SpekeError) {
            return try SpekeKeyRequests.keyPeriod(contentKeyPeriod(id: "--period")).name
        } catch {
            throw CPIXFileError(.invalidArgument, error.message)
        }
    }
}
