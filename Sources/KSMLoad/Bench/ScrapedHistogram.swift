import Foundation

/// One latency histogram as a process's `/metrics` renders it, summed over the series a filter
/// keeps. `ksm bench http` reads the edge's and the workers' own histograms before and after a
/// phase: the difference says how much of a player's wait each tier holds, where the client's
/// latency alone says only the total.
package struct ScrapedHistogram: Sendable, Equatable {
    /// Observations at or below each bucket bound, in seconds (`+Inf` as `.infinity`).
    package private(set) var cumulative: [Double: Double] = [:]

    package init() {}

    /// Reads `<name>_bucket{...,le="..."} value` lines of Prometheus text; `keep` sees each series'
    /// labels (the text between the braces) and decides whether it counts.
    package init(prometheusText text: String, name: String, keep: (Substring) -> Bool = { _ in true }) {
        let prefix = "\(name)_bucket{"
        for line in text.split(separator: "\n") where line.hasPrefix(prefix) {
            guard let close = line.lastIndex(of: "}") else { continue }
            let labels = line[line.index(line.startIndex, offsetBy: prefix.count)..<close]
            guard keep(labels), let bound = Self.bound(in: labels),
                let value = Double(line[line.index(after: close)...].trimmingCharacters(in: .whitespaces))
            else { continue }
            cumulative[bound, default: 0] += value
        }
    }

    /// The `le` label's value in seconds.
    private static func bound(in labels: Substring) -> Double? {
        guard let start = labels.range(of: "le=\"")?.upperBound, let end = labels[start...].firstIndex(of: "\"") else { return nil }
        let text = labels[start..<end]
        return text == "+Inf" ? .infinity : Double(text)
    }

    /// Observations in all.
    package var count: Double { cumulative[.infinity] ?? 0 }

    /// What was observed between `earlier` and this reading of the same process(es).
    package func since(_ earlier: ScrapedHistogram) -> ScrapedHistogram {
        var difference = ScrapedHistogram()
        for (bound, value) in cumulative { difference.cumulative[bound] = value - (earlier.cumulative[bound] ?? 0) }
        return difference
    }

    /// What a phase added between two readings of one tier; nil when either reading is missing (a
    /// process that did not answer its scrape), never a difference against nothing.
    package static func phase(before: ScrapedHistogram?, after: ScrapedHistogram?) -> ScrapedHistogram? {
        guard let before, let after else { return nil }
        return after.since(before)
    }

    /// Adds another process's reading of the same histogram.
    package mutating func add(_ other: ScrapedHistogram) {
        for (bound, value) in other.cumulative { cumulative[bound, default: 0] += value }
    }

    /// The smallest bucket bound (seconds) at or below which at least `quantile` of the
    /// observations lie: the quantile is at most this. Nil with no observations.
    package func upperBound(quantile: Double) -> Double? {
        let total = count
        guard total > 0 else { return nil }
        return cumulative.keys.sorted().first { (cumulative[$0] ?? 0) >= quantile * total }
    }

    /// `/metrics` of a process on loopback `port`; nil when it does not answer 200 within 2 s. A
    /// reading missing on either side of a phase leaves that figure out: against an empty reading
    /// the difference would count everything since the process started.
    package static func scrape(port: Int) async -> String? {
        await LoopbackGet.body(port: port, path: "/metrics").map { String(decoding: $0, as: UTF8.self) }
    }
}
