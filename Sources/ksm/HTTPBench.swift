import ArgumentParser
import Foundation
import KSMLoad

/// `ksm bench http`: the whole license path over HTTP (redis-server, `ksm broker`, `ksm serve`,
/// `ksm edge`) at saturation against the in-process CKC rate on the same cores, then latency open loop
/// at fractions of that rate. Prints a table on standard error and one JSON line on standard output.
struct HTTPBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "http",
        abstract:
            "CKCs/s through ksm edge, Kafka, Redis and ksm serve processes driven over HTTP at saturation, against the in-process rate; then p50/p99 latency open loop at 0.5 and 0.8 of it."
    )

    @Option(help: "Directory with the test credentials.")
    var fixtures = "Fixtures/test-credentials"
    @Option(help: "ksm serve processes.")
    var workers = 1
    @Option(help: "Partitions of the requests topic (librdkafka's mock walks each one's retained log on every fetch).")
    var partitions = 12
    @Option(help: "Requests of the saturation phase.")
    var requests = 8_000
    @Option(
        help:
            "Requests in flight during the saturation phase (closed loop); also the client's connections. Default: 256, or 512 with --worker-cpus, where a request waits longer on the harness's CPUs and the loop needs more in flight to keep the workers' CPUs busy."
    )
    var concurrency: Int?
    @Option(help: "Seconds each open-loop latency phase sends for.")
    var latencySeconds = 10.0
    @Option(help: "Fractions of the saturation rate for the latency phases, comma-separated.")
    var loads = "0.5,0.8"
    @Option(help: "Request shapes, comma-separated, taken in turn.")
    var shapes = HTTPLoadShape.allCases.map(\.rawValue).joined(separator: ",")
    @Option(help: "Extra `ksm edge` flags, space-separated (e.g. `--edge-flags=\"--kafka-property linger.ms=5\"`).")
    var edgeFlags = ""
    @Option(help: "Extra `ksm serve` flags for every worker, space-separated.")
    var workerFlags = ""
    @Option(
        help:
            "fetch.wait.max.ms of the edge's and the workers' consumers, 0 for their default (10): librdkafka's mock broker holds an empty fetch for its whole wait, a real broker answers when a record arrives."
    )
    var mockFetchWaitMs = 2
    @Option(
        name: .customLong("worker-cpus"),
        help:
            "Pin the workers to these CPUs (a taskset list: 1, 0,2, 0-1) and the edge, the client, the broker and redis-server to the rest; the in-process baseline then runs on the workers' CPUs, so the ratio is what those CPUs deliver through the whole path against what they do in process. Default: every process shares every core."
    )
    var workerCPUs: String?
    @Option(help: "Keep the children's logs in this directory (default: a temporary one, removed).")
    var logs: String?

    func validate() throws {
        guard workers >= 1, partitions >= 1, requests >= 1, (concurrency ?? 1) >= 1, latencySeconds > 0, mockFetchWaitMs >= 0 else {
            throw ValidationError(
                "--workers, --partitions, --requests and --concurrency must be at least 1, --latency-seconds positive, --mock-fetch-wait-ms 0 or more")
        }
        if case .failure(let unknown) = HTTPLoadShape.list(shapes) { throw ValidationError(unknown.description) }
        guard parsedLoads != nil else { throw ValidationError("--loads must be fractions between 0 and 1, comma-separated (0.5,0.8)") }
    }

    var parsedLoads: [Double]? {
        let values = loads.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard !values.isEmpty, values.allSatisfy({ $0.map { $0 > 0 && $0 <= 1 } ?? false }) else { return nil }
        return values.compactMap { $0 }
    }

    func run() async throws {
        var setup = HTTPBenchmark.Setup(executable: URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath())
        setup.fixtures = fixtures
        setup.workers = workers
        setup.partitions = partitions
        setup.saturationRequests = requests
        setup.concurrency = concurrency ?? (workerCPUs == nil ? 256 : 512)
        setup.latencySeconds = latencySeconds
        setup.loads = parsedLoads ?? [0.5, 0.8]
        setup.shapes = (try? HTTPLoadShape.list(shapes).get()) ?? HTTPLoadShape.allCases
        setup.edgeFlags = edgeFlags.split(separator: " ").map(String.init)
        setup.workerFlags = workerFlags.split(separator: " ").map(String.init)
        setup.mockFetchWaitMilliseconds = mockFetchWaitMs == 0 ? nil : mockFetchWaitMs
        if let workerCPUs {
            guard FileManager.default.isExecutableFile(atPath: CPUPinning.taskset.path) else {
                throw ValidationError("--worker-cpus needs \(CPUPinning.taskset.path) (util-linux), which is not there")
            }
            do { setup.pinning = try CPUPinning(workerCPUs: workerCPUs) } catch { throw ValidationError(error.description) }
        }
        if let logs {
            setup.logDirectory = URL(fileURLWithPath: logs)
        }
        setup.progress = { FileHandle.standardError.write(Data("[http] \($0)\n".utf8)) }
        let result = try await HTTPBenchmark(setup: setup).run()
        FileHandle.standardError.write(Data((HTTPBenchmark.table(result) + "\n").utf8))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        FileHandle.standardOutput.write(try encoder.encode(result) + Data("\n".utf8))
        if !result.allCorrect { throw ExitCode(1) }
    }
}
