import Foundation
import Kafka
import OwnedThreads
import Synchronization

/// `ksm broker`'s control channel: one command per line on standard input, one answer per line on
/// standard output (`ok <command>` or `error <command>: <why>`), so a fault test in another process
/// can take a broker down, inject request errors or move leadership, and know when it took effect.
///
/// Commands (broker IDs are 1...`--brokers`; API and error names as `KafkaMockCluster.APIKey.byName`
/// and librdkafka's `rd_kafka_err2name` spell them):
/// - `broker-down ID`, `broker-up ID`: disconnect a broker's clients and refuse connections / accept again.
/// - `rtt ID MS`: add MS milliseconds to every response of a broker (0 to clear).
/// - `request-errors API COUNT ERROR`: the next COUNT requests of type API fail with ERROR, cluster-wide
///   (e.g. `request-errors Produce 5 NOT_LEADER_FOR_PARTITION`; `_TRANSPORT` drops the connection).
/// - `clear-request-errors API`: forget the errors still queued for API.
/// - `topic-error TOPIC ERROR`: metadata reports ERROR for TOPIC (`NO_ERROR` clears it).
/// - `partition-leader TOPIC PARTITION ID`: move a partition's leadership (-1: none).
/// - `coordinator GROUP ID`: move a consumer group's coordinator (the group is tracked from then on).
/// - `failover ID`: what a controller does once a dead broker's session expired: leadership of every
///   partition ID leads moves to the next live replica, every tracked group ID coordinates to the
///   next live broker (see ``ClusterLayout``). ID must be down.
/// - `broker-kill ID MS`: `broker-down ID`, then `failover ID` MS milliseconds later; answered once the
///   failover is done (later commands wait for it), so the answer marks the controller's moment.
/// - `ping`: answers `ok ping`; a way to wait for the broker.
///
/// The mock has no controller of its own: without `failover`, a broker set down keeps leading its
/// partitions and coordinating its groups, so this channel keeps the layout (``ClusterLayout``).
package final class BrokerControl: Sendable {
    package enum Command: Equatable, Sendable {
        case brokerDown(Int32)
        case brokerUp(Int32)
        case brokerKill(Int32, failoverAfter: Duration)
        case failover(Int32)
        case roundTripTime(Int32, milliseconds: Int64)
        case requestErrors(KafkaMockCluster.APIKey, count: Int, KafkaError.Code)
        case clearRequestErrors(KafkaMockCluster.APIKey)
        case topicError(String, KafkaError.Code)
        case partitionLeader(topic: String, partition: Int32, broker: Int32)
        case coordinator(group: String, broker: Int32)
        case ping
    }

    package struct ParseError: Error, CustomStringConvertible {
        package var description: String
    }

    let cluster: KafkaMockCluster
    /// Who leads and coordinates what; changed by this channel's thread and read by tests.
    let state: Mutex<ClusterLayout>

    /// The layout's leaders are taken to be in place already (see ``place(topic:partitions:)``).
    package init(cluster: KafkaMockCluster, layout: ClusterLayout) {
        self.cluster = cluster
        self.state = Mutex(layout)
    }

    /// The layout now.
    package var layout: ClusterLayout { state.withLock { $0 } }

    /// Places a new topic's partition leaders across the replicas (``ClusterLayout/addTopic(_:partitions:)``),
    /// so the layout knows every leader: the mock picks one at random and cannot be asked.
    package func place(topic: String, partitions: Int) throws(KafkaError) {
        let moves = state.withLock { $0.addTopic(topic, partitions: partitions) }
        try perform(moves)
    }

    /// Parses one line; words are separated by white space.
    package static func parse(_ line: String) throws(ParseError) -> Command {
        let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
        guard let verb = words.first else { throw ParseError(description: "empty command") }
        func int32(_ index: Int, _ what: String) throws(ParseError) -> Int32 {
            guard index < words.count, let value = Int32(words[index]) else { throw ParseError(description: "\(verb): \(what) must be an integer") }
            return value
        }
        func api(_ index: Int) throws(ParseError) -> KafkaMockCluster.APIKey {
            guard index < words.count, let key = KafkaMockCluster.APIKey(name: words[index]) else {
                throw ParseError(description: "\(verb): API must be one of \(KafkaMockCluster.APIKey.byName.keys.sorted().joined(separator: ", "))")
            }
            return key
        }
        func code(_ index: Int) throws(ParseError) -> KafkaError.Code {
            guard index < words.count, let code = KafkaError.Code(name: words[index]) else { throw ParseError(description: "\(verb): unknown error name") }
            return code
        }
        func arity(_ n: Int) throws(ParseError) {
            guard words.count == n + 1 else { throw ParseError(description: "\(verb) takes \(n) argument(s)") }
        }
        switch verb {
        case "broker-down":
            try arity(1)
            return .brokerDown(try int32(1, "broker ID"))
        case "broker-up":
            try arity(1)
            return .brokerUp(try int32(1, "broker ID"))
        case "broker-kill":
            try arity(2)
            let ms = try int32(2, "MS")
            guard ms >= 0, ms <= 600_000 else { throw ParseError(description: "broker-kill: MS must be 0...600000") }
            return .brokerKill(try int32(1, "broker ID"), failoverAfter: .milliseconds(ms))
        case "failover":
            try arity(1)
            return .failover(try int32(1, "broker ID"))
        case "rtt":
            try arity(2)
            return .roundTripTime(try int32(1, "broker ID"), milliseconds: Int64(try int32(2, "MS")))
        case "request-errors":
            try arity(3)
            let count = try int32(2, "COUNT")
            guard count > 0, count <= 10_000 else { throw ParseError(description: "request-errors: COUNT must be 1...10000") }
            return .requestErrors(try api(1), count: Int(count), try code(3))
        case "clear-request-errors":
            try arity(1)
            return .clearRequestErrors(try api(1))
        case "topic-error":
            try arity(2)
            return .topicError(words[1], try code(2))
        case "partition-leader":
            try arity(3)
            return .partitionLeader(topic: words[1], partition: try int32(2, "PARTITION"), broker: try int32(3, "broker ID"))
        case "coordinator":
            try arity(2)
            return .coordinator(group: words[1], broker: try int32(2, "broker ID"))
        case "ping":
            try arity(0)
            return .ping
        default: throw ParseError(description: "unknown command \(verb)")
        }
    }

    /// Why a well-formed command did not take effect.
    package enum ApplyError: Error, Sendable, CustomStringConvertible {
        /// The mock cluster refused it (e.g. an unknown broker or topic).
        case kafka(KafkaError)
        /// It makes no sense for the layout (e.g. failover away from a live broker).
        case refused(String)

        package var description: String {
            switch self {
            case .kafka(let error): "\(error)"
            case .refused(let why): why
            }
        }
    }

    /// Applies one command to the cluster (and the layout). `broker-kill` blocks the caller for its delay.
    package func apply(_ command: Command) throws(ApplyError) {
        if case .failover(let id) = command {
            let layout = layout
            guard layout.brokers.contains(id) else { throw .refused("no broker \(id)") }
            guard layout.down.contains(id) else { throw .refused("broker \(id) is up: a controller moves leadership only away from a dead broker") }
        }
        do throws(KafkaError) {
            try applyToCluster(command)
        } catch {
            throw .kafka(error)
        }
    }

    private func applyToCluster(_ command: Command) throws(KafkaError) {
        switch command {
        case .brokerDown(let id):
            try cluster.setBrokerDown(id)
            state.withLock { $0.markDown(id) }
        case .brokerUp(let id):
            try cluster.setBrokerUp(id)
            state.withLock { $0.markUp(id) }
        case .brokerKill(let id, let delay):
            try applyToCluster(.brokerDown(id))
            // The controller's session timeout: the broker is dead, nobody has noticed yet.
            Thread.sleep(forTimeInterval: delay / .seconds(1))
            try applyToCluster(.failover(id))
        case .failover(let id):
            // Checked before anything moves (see `apply`): an up or unknown broker is refused there.
            try perform(state.withLock { $0.failover(from: id) })
        case .roundTripTime(let id, let ms): try cluster.setBrokerRoundTripTime(id, .milliseconds(ms))
        case .requestErrors(let api, let count, let code): cluster.pushRequestErrors(api, Array(repeating: code, count: count))
        case .clearRequestErrors(let api): cluster.clearRequestErrors(api)
        case .topicError(let topic, let code): cluster.setTopicError(topic, code)
        case .partitionLeader(let topic, let partition, let broker):
            try cluster.setPartitionLeader(topic: topic, partition: partition, brokerID: broker)
            state.withLock { $0.setLeader(.init(topic: topic, partition: partition), broker: broker) }
        case .coordinator(let group, let broker):
            try cluster.setGroupCoordinator(group: group, brokerID: broker)
            state.withLock { $0.setCoordinator(group: group, broker: broker) }
        case .ping: break
        }
    }

    /// Makes the mock cluster match the layout's moves.
    private func perform(_ moves: [ClusterLayout.Move]) throws(KafkaError) {
        for move in moves {
            switch move {
            case .leader(let partition, let broker):
                try cluster.setPartitionLeader(topic: partition.topic, partition: partition.partition, brokerID: broker)
            case .coordinator(let group, let broker):
                try cluster.setGroupCoordinator(group: group, brokerID: broker)
            }
        }
    }

    /// Parses and applies one line; returns the answer line.
    package func handle(_ line: String) -> String {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        do {
            try apply(try Self.parse(trimmed))
            return "ok \(trimmed)"
        } catch {
            return "error \(trimmed): \(error)"
        }
    }

    /// Reads standard input on a thread of its own (a blocking read never belongs on Swift's pool)
    /// until end of file, answering each line on standard output. End of file (e.g. stdin is
    /// /dev/null) only ends the channel, not the broker.
    package func start() {
        let control = self
        OwnedThread.start(name: "ksm-broker-control") {
            while let line = readLine(strippingNewline: true) {
                if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
                let answer = control.handle(line)
                FileHandle.standardOutput.write(Data((answer + "\n").utf8))
            }
        }.detach()
    }
}
