import ArgumentParser
import Foundation
import KSMLoad

/// `ksm bench storm`: the key-rotation storm through real `ksm serve` processes, three ways in one run:
/// smoothing on (scheduler + cache) with one worker process, smoothing off (FIFO, no cache) with one,
/// and smoothing on with two processes. Prints JSON; draws the chart as SVG.
struct StormBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storm",
        abstract:
            "Key-rotation storm through Kafka, Redis and ksm serve processes: drain time against the ideal, latency per priority class, smoothing on/off, 1 vs 2 workers."
    )

    @Option(help: "Directory with the test credentials.")
    var fixtures = "Fixtures/test-credentials"
    @Option(help: "Viewers already playing; all ask for the next key within the window. Default: 20000, or the mix's.")
    var viewers: Int?
    @Option(help: "New viewers joining during the storm. Default: 2000, or the mix's.")
    var joiners: Int?
    @Option(
        help:
            "The storm's mix: rotation (20000 rotating + 2000 joining) or join-heavy (5000 rotating + 17000 joining, the class topics' reference); --viewers and --joiners override it."
    )
    var mix: StormMix = .rotation
    @Option(help: "Where to write the chart (SVG).")
    var chart = "docs/storm.svg"
    @Option(help: "Redraw the chart from figures saved by an earlier run (the JSON beside its chart) and exit.")
    var redraw: String?
    @Option(
        parsing: .upToNextOption,
        help:
            "Scenarios to run, in order: on, off, on-2 (two worker processes), scheduler-only, cache-only, classes (workers read one topic per class and the client sends each class to its own), classes-2, window (a rotation schedule is put and the rotating viewers ask at their replies' advertised next-key.fetch-at, priority prefetch), window-classes."
    )
    var scenarios: [String] = ["on", "off", "on-2"]
    @Option(
        help:
            "The workers' Redis: single (one redis-server), cluster (three masters with a replica each, redis-cluster://) or cluster-masters (three masters, no replicas)."
    )
    var redis: StormRun.RedisTopology = .single
    @Option(
        help: "Seconds of the prefetch window the window scenarios' workers advertise (compressed from ksm serve's 60 s default; the same for every scenario).")
    var prefetchWindow: Double = 20
    @Option(help: "Seconds between the window's end and the boundary in the window scenarios.")
    var prefetchMargin: Double = 2
    @Option(help: "Extra `ksm serve` flags for every worker, space-separated (e.g. `--worker-flags=\"--max-batch-size 128\"`), to compare settings.")
    var workerFlags = ""
    @Flag(help: "Run even when the host was more than 25 % busy in the second before the storm (its figures then measure the other processes too).")
    var allowBusyHost = false
    @Option(
        name: .customLong("worker-cpus"),
        help:
            "Pin the workers to these CPUs (a taskset list: 0, 0,2, 0-1) and the client, the mock Kafka cluster and redis-server to the rest; the in-process baseline runs on the workers' CPUs, so the ideal is what those CPUs do in process. Default: every process shares every core."
    )
    var workerCPUs: String?
    @Option(
        name: .customLong("repeat"),
        help: "Storms per scenario, interleaved (each scenario once, then again); above 1 the figures add each scenario's median ratios (`medians`).")
    var repeats = 1

    func validate() throws {
        guard repeats >= 1 else { throw ValidationError("--repeat must be at least 1 (storms per scenario), not \(repeats)") }
        // Runs are told apart by their scenario's label (and round); --repeat is the way to run one again.
        if let twice = scenarios.first(where: { name in scenarios.filter { $0 == name }.count > 1 }) {
            throw ValidationError("scenario \(twice) is named twice in --scenarios; use --repeat to run each scenario more than once")
        }
    }

    func run() async throws {
        let viewers = self.viewers ?? mix.viewers
        let joiners = self.joiners ?? mix.joiners
        if let redraw {
            guard let data = FileManager.default.contents(atPath: redraw) else { throw ValidationError("cannot read \(redraw)") }
            let saved = try JSONDecoder().decode(StormRun.Output.self, from: data)
            let svg = StormChart.svg(
                saved.runs, title: StormRun.title(viewers: viewers, joiners: joiners, ideal: saved.idealDrainSeconds, workerCPUs: saved.workerCPUs))
            try svg.write(toFile: chart, atomically: true, encoding: .utf8)
            return
        }
        let chosen = try scenarios.map { name -> StormRun.Scenario in
            guard let s = StormRun.known[name] else {
                throw ValidationError("unknown scenario \(name); use \(StormRun.known.keys.sorted().joined(separator: ", "))")
            }
            return s
        }
        var storm = StormRun(
            fixtures: fixtures, viewers: viewers, joiners: joiners, scenarios: chosen,
            workerFlags: workerFlags.split(separator: " ").map(String.init),
            executable: URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(), allocator: Allocator.description,
            redis: redis, progress: { FileHandle.standardError.write(Data("[storm] \($0)\n".utf8)) })
        storm.busyHostLimit = allowBusyHost ? nil : 0.25
        storm.repeats = repeats
        if let workerCPUs {
            guard FileManager.default.isExecutableFile(atPath: CPUPinning.taskset.path) else {
                throw ValidationError("--worker-cpus needs \(CPUPinning.taskset.path) (util-linux), which is not there")
            }
            do { storm.pinning = try CPUPinning(workerCPUs: workerCPUs) } catch { throw ValidationError(error.description) }
        }
        storm.prefetchWindowSeconds = prefetchWindow
        storm.prefetchMarginSeconds = prefetchMargin
        let (output, title) = try await storm.run()
        try StormChart.svg(output.runs, title: title).write(toFile: chart, atomically: true, encoding: .utf8)
        // The full figures, timeline included, beside the chart.
        let full = JSONEncoder()
        full.outputFormatting = [.prettyPrinted, .sortedKeys]
        try full.encode(output).write(to: URL(fileURLWithPath: chart).deletingPathExtension().appendingPathExtension("json"))
        storm.progress("chart written to \(chart)")
        var printable = output
        // The timeline is in the chart; keep the printed JSON readable.
        printable.runs = printable.runs.map {
            var r = $0
            r.timeline = []
            return r
        }
        FileHandle.standardOutput.write(try full.encode(printable) + Data("\n".utf8))
        if output.runs.contains(where: { !$0.allCorrect }) { throw ExitCode(1) }
    }
}

extension StormRun.RedisTopology: ExpressibleByArgument {}

/// The storm's reference mixes of rotating (continuity) and joining (new) viewers.
enum StormMix: String, ExpressibleByArgument, CaseIterable {
    case rotation
    case joinHeavy = "join-heavy"

    var viewers: Int { self == .rotation ? 20_000 : 5_000 }
    var joiners: Int { self == .rotation ? 2_000 : 17_000 }
}
