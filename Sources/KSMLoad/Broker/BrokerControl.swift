import Foundation
import Kafka
import OwnedThreads

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
/// - `coordinator GROUP ID`: move a consumer group's coordinator.
/// - `ping`: answers `ok ping`; a way to wait for the broker.
package struct BrokerControl {
    package enum Command: Equatable {
        case brokerDown(Int32)
        case brokerUp(Int32)
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

    package init(cluster: KafkaMockCluster) {
        self.cluster = cluster
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
        case "broker-down": try arity(1); return .brokerDown(try int32(1, "broker ID"))
        case "broker-up": try arity(1); return .brokerUp(try int32(1, "broker ID"))
        case "rtt": try arity(2); return .roundTripTime(try int32(1, "broker ID"), milliseconds: Int64(try int32(2, "MS")))
        case "request-errors":
            try arity(3)
            let count = try int32(2, "COUNT")
            guard count > 0, count <= 10_000 else { throw ParseError(description: "request-errors: COUNT must be 1...10000") }
            return .requestErrors(try api(1), count: Int(count), try code(3))
        case "clear-request-errors": try arity(1); return .clearRequestErrors(try api(1))
        case "topic-error": try arity(2); return .topicError(words[1], try code(2))
        case "partition-leader": try arity(3); return .partitionLeader(topic: words[1], partition: try int32(2, "PARTITION"), broker: try int32(3, "broker ID"))
        case "coordinator": try arity(2); return .coordinator(group: words[1], broker: try int32(2, "broker ID"))
        case "ping": try arity(0); return .ping
        default: throw ParseError(description: "unknown command \(verb)")
        }
    }

    /// Applies one command to the cluster.
    package func apply(_ command: Command) throws(KafkaError) {
        switch command {
        case .brokerDown(let id): try cluster.setBrokerDown(id)
        case .brokerUp(let id): try cluster.setBrokerUp(id)
        case .roundTripTime(let id, let ms): try cluster.setBrokerRoundTripTime(id, .milliseconds(ms))
        case .requestErrors(let api, let count, let code): cluster.pushRequestErrors(api, Array(repeating: code, count: count))
        case .clearRequestErrors(let api): cluster.clearRequestErrors(api)
        case .topicError(let topic, let code): cluster.setTopicError(topic, code)
        case .partitionLeader(let topic, let partition, let broker): try cluster.setPartitionLeader(topic: topic, partition: partition, brokerID: broker)
        case .coordinator(let group, let broker): try cluster.setGroupCoordinator(group: group, brokerID: broker)
        case .ping: break
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
