import ArgumentParser
import Foundation
import KSMLoad
import Kafka
import Logging

/// `ksm broker`: librdkafka's mock Kafka cluster as a process, for tests, the demo and local work.
struct BrokerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broker",
        abstract: "Start an embedded mock Kafka cluster; print its bootstrap servers as the first line and run until SIGTERM.",
        discussion: """
            Fault injection: one command per line on standard input, answered `ok ...` or `error ...` on standard output:
            broker-down ID | broker-up ID | broker-kill ID MS | failover ID | rtt ID MS | request-errors API COUNT ERROR | clear-request-errors API |
            topic-error TOPIC ERROR | partition-leader TOPIC PARTITION ID | coordinator GROUP ID | ping.
            """
    )

    @Option(help: "Number of mock brokers.")
    var brokers: Int = 1

    @Option(help: "Partitions of the requests and replies topics.")
    var partitions: Int = 12

    @Option(
        help:
            "Topics to create: requests (and one per priority class, for ksm serve --class-topics), replies and dead letters. NAME:N gives one topic N partitions (default: --partitions, 1 for a .dlq topic)."
    )
    var topics: [String] = [
        "fps.license.requests", "fps.license.requests.continuity", "fps.license.requests.new",
        "fps.license.requests.prefetch", "fps.license.replies", "fps.license.dlq",
    ]

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let cluster = try KafkaMockCluster(brokers: brokers)
        let control = BrokerControl(cluster: cluster, layout: ClusterLayout(brokers: brokers))
        // Every entry parses: validate() refused any that does not.
        for case (let topic, let count)? in topics.map({ Self.topic($0, defaultPartitions: partitions) }) {
            // Replicated on every broker up to three (librdkafka 2.0.2's mock replicates on the first
            // min(3, brokers) whatever is asked), leaders spread across them so that killing any
            // broker moves some leadership.
            try cluster.createTopic(topic, partitions: count, replicationFactor: min(3, brokers))
            try control.place(topic: topic, partitions: count)
        }
        FileHandle.standardOutput.write(Data((cluster.bootstrapServers + "\n").utf8))
        control.start()
        await SignalWaiter.waitForTermination()
        withExtendedLifetime(cluster) {}
    }

    func validate() throws {
        guard brokers >= 1, partitions >= 1 else { throw ValidationError("--brokers and --partitions must be at least 1") }
        for entry in topics where Self.topic(entry, defaultPartitions: partitions) == nil {
            throw ValidationError("--topics entry '\(entry)': expected NAME or NAME:PARTITIONS with PARTITIONS at least 1")
        }
    }

    /// A `--topics` entry's name and partition count: `NAME:N`, or `NAME` with the default (one
    /// partition for a dead-letter topic); nil for anything else. Kafka topic names never hold a colon.
    static func topic(_ entry: String, defaultPartitions: Int) -> (name: String, partitions: Int)? {
        let parts = entry.split(separator: ":", omittingEmptySubsequences: false)
        guard let name = parts.first, !name.isEmpty, parts.count <= 2 else { return nil }
        guard parts.count == 2 else { return (entry, entry.hasSuffix(".dlq") ? 1 : defaultPartitions) }
        guard let count = Int(parts[1]), count >= 1 else { return nil }
        return (String(name), count)
    }
}

/// Suspends until SIGTERM or SIGINT arrives.
enum SignalWaiter {
    static func waitForTermination() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = OnceFlag()
            var sources: [DispatchSourceSignal] = []
            for sig in [SIGTERM, SIGINT] {
                signal(sig, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
                source.setEventHandler { if once.claim() { continuation.resume() } }
                source.resume()
                sources.append(source)
            }
            SignalSources.keep(sources)
        }
    }
}

/// Keeps signal sources alive for the life of the process.
enum SignalSources {
    nonisolated(unsafe) private static var retained: [DispatchSourceSignal] = []
    static func keep(_ sources: [DispatchSourceSignal]) { retained += sources }
}

/// A flag that can be claimed once, from any thread.
final class OnceFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var claimed = false
    func claim() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if claimed { return false }
        claimed = true
        return true
    }
}
