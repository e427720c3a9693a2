import KSMLoad
import Kafka
import Testing

/// `ksm broker`'s control language, parsed without a cluster.
@Suite struct BrokerControlTests {
    @Test(
        "Each command parses to its value",
        arguments: [
            ("broker-down 2", BrokerControl.Command.brokerDown(2)),
            ("broker-up 1", .brokerUp(1)),
            ("broker-kill 2 9000", .brokerKill(2, failoverAfter: .seconds(9))),
            ("broker-kill 3 0", .brokerKill(3, failoverAfter: .zero)),
            ("failover 2", .failover(2)),
            ("rtt 3 250", .roundTripTime(3, milliseconds: 250)),
            ("coordinator fps-ksm 2", .coordinator(group: "fps-ksm", broker: 2)),
            ("partition-leader fps.license.requests 4 -1", .partitionLeader(topic: "fps.license.requests", partition: 4, broker: -1)),
            ("  ping  ", .ping),
        ])
    func parses(line: String, command: BrokerControl.Command) throws {
        #expect(try BrokerControl.parse(line) == command)
    }

    @Test(
        "A malformed command is refused with a reason naming the command",
        arguments: [
            ("", "empty command"),
            ("broker-down", "broker-down takes 1 argument(s)"),
            ("broker-down two", "broker-down: broker ID must be an integer"),
            ("broker-kill 2", "broker-kill takes 2 argument(s)"),
            ("broker-kill 2 -1", "broker-kill: MS must be 0...600000"),
            ("broker-kill 2 soon", "broker-kill: MS must be an integer"),
            ("failover", "failover takes 1 argument(s)"),
            ("request-errors Produce 0 NOT_LEADER_FOR_PARTITION", "request-errors: COUNT must be 1...10000"),
            ("request-errors Nope 1 NOT_LEADER_FOR_PARTITION", "request-errors: API must be one of"),
            ("topic-error t NOT_AN_ERROR", "topic-error: unknown error name"),
            ("reboot", "unknown command reboot"),
        ])
    func refuses(line: String, reason: String) {
        #expect {
            _ = try BrokerControl.parse(line)
        } throws: { error in
            "\(error)".hasPrefix(reason)
        }
    }
}
