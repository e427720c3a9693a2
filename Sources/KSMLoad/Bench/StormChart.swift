import KSMService

/// Draws storm runs as one SVG: queued work, replies per second, and p99 latency per priority class
/// over time, one panel each, one line per run (and per class). Hand-written SVG: no dependency,
/// and the file diffs well in git.
package enum StormChart {
    static let palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]

    package static func svg(_ runs: [StormReport], title: String) -> String {
        let width = 900.0
        let panelHeight = 200.0
        let left = 70.0
        let right = 20.0
        let top = 40.0
        let gap = 50.0
        let height = top + 3 * panelHeight + 3 * gap
        let maxT = max(runs.flatMap { $0.timeline.map(\.t) }.max() ?? 1, 1) + 0.25
        var out = #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(height))" font-family="sans-serif" font-size="12">"#
        out += "\n" + #"<rect width="100%" height="100%" fill="white"/>"#
        out += "\n" + #"<text x="\#(left)" y="20" font-size="15">\#(escape(title))</text>"#

        struct Series {
            var name: String
            var color: String
            var dashed: Bool
            var faint = false
            var points: [(Double, Double)]
        }
        func panel(_ index: Int, _ label: String, _ series: [Series], legendLeft: Bool = false) {
            let y0 = top + Double(index) * (panelHeight + gap)
            let maxV = max(series.flatMap { $0.points.map(\.1) }.max() ?? 1, 1) * 1.05
            let plotWidth = width - left - right
            func x(_ t: Double) -> Double { left + t / maxT * plotWidth }
            func y(_ v: Double) -> Double { y0 + panelHeight - v / maxV * panelHeight }
            out += "\n" + #"<text x="\#(left)" y="\#(y0 - 8)" font-weight="bold">\#(escape(label))</text>"#
            out += "\n" + ##"<rect x="\##(left)" y="\##(y0)" width="\##(plotWidth)" height="\##(panelHeight)" fill="none" stroke="#999"/>"##
            for step in 0...4 {
                let v = maxV * Double(step) / 4
                out += "\n" + #"<text x="\#(left - 6)" y="\#(y(v) + 4)" text-anchor="end">\#(format(v))</text>"#
            }
            let tickEvery = maxT > 20 ? 5.0 : (maxT > 8 ? 2.0 : 1.0)
            var t = 0.0
            while t <= maxT {
                out += "\n" + #"<text x="\#(x(t))" y="\#(y0 + panelHeight + 14)" text-anchor="middle">\#(format(t)) s</text>"#
                t += tickEvery
            }
            for (n, s) in series.enumerated() where !s.points.isEmpty {
                let path = s.points.map { "\(format2(x($0.0))),\(format2(y($0.1)))" }.joined(separator: " ")
                let dash = (s.dashed ? " stroke-dasharray=\"5,3\"" : "") + (s.faint ? " stroke-opacity=\"0.5\"" : "")
                out += "\n<polyline fill=\"none\" stroke=\"\(s.color)\" stroke-width=\"1.8\"\(dash) points=\"\(path)\"/>"
                let ly = y0 + 14 + Double(n) * 15
                let lx = legendLeft ? left + 10 : width - right - 230
                out += "\n<line x1=\"\(lx)\" y1=\"\(ly - 4)\" x2=\"\(lx + 20)\" y2=\"\(ly - 4)\" stroke=\"\(s.color)\" stroke-width=\"2\"\(dash)/>"
                out += "\n" + #"<text x="\#(lx + 25)" y="\#(ly)">\#(escape(s.name))</text>"#
            }
        }
        // One colour per scenario: the runs of a repeated scenario (`, run 2` ...) share it, the later
        // ones drawn faint.
        let scenarios = runs.map { scenario(of: $0.label) }
        let distinct = scenarios.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        func color(_ i: Int) -> String { palette[(distinct.firstIndex(of: scenarios[i]) ?? i) % palette.count] }
        func faint(_ i: Int) -> Bool { scenarios[..<i].contains(scenarios[i]) }
        panel(
            0, "Queued jobs (sent, not yet answered)",
            runs.enumerated().map { i, r in
                Series(name: r.label, color: color(i), dashed: false, faint: faint(i), points: r.timeline.map { ($0.t + 0.25, Double($0.queued)) })
            })
        panel(
            1, "Replies per second",
            runs.enumerated().map { i, r in
                Series(name: r.label, color: color(i), dashed: false, faint: faint(i), points: r.timeline.map { ($0.t + 0.125, $0.repliesPerSecond) })
            })
        panel(
            2, "p99 latency of answers (ms): solid continuity, dashed new sessions",
            runs.enumerated().flatMap { i, r in
                [
                    Series(
                        name: "\(r.label) continuity", color: color(i), dashed: false, faint: faint(i),
                        points: r.timeline.compactMap { b in b.continuityP99.map { (b.t + 0.125, $0) } }),
                    Series(
                        name: "\(r.label) new", color: color(i), dashed: true, faint: faint(i),
                        points: r.timeline.compactMap { b in b.newP99.map { (b.t + 0.125, $0) } }),
                ]
            }, legendLeft: true)
        out += "\n</svg>\n"
        return out
    }

    /// The label of a repeated scenario's run: the scenario's, with its round (1-based).
    package static func runLabel(scenario: String, round: Int) -> String {
        "\(scenario), run \(round)"
    }

    /// A run's scenario: its label without the round ``runLabel(scenario:round:)`` adds.
    package static func scenario(of label: String) -> String {
        guard let range = label.range(of: ", run ", options: .backwards), Int(label[range.upperBound...]) != nil else { return label }
        return String(label[..<range.lowerBound])
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    static func format(_ v: Double) -> String {
        v >= 100 ? String(Int(v.rounded())) : String((v * 10).rounded() / 10)
    }

    static func format2(_ v: Double) -> String { String((v * 10).rounded() / 10) }
}
