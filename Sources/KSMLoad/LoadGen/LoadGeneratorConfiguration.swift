import KSMService

/// What `ksm loadgen` simulates: viewers of live streams joining at a steady rate, then a key rotation
/// that makes every viewer ask for the next key at the same moment.
package struct LoadGeneratorConfiguration: Sendable {
    package var brokers: String
    package var requestsTopic = "fps.license.requests"
    package var repliesTopic = "fps.license.replies"
    /// Simulated devices, one account each unless `accounts` is smaller.
    package var viewers = 200
    /// Accounts the viewers are spread over. Default: one per viewer.
    package var accounts: Int? = nil
    /// Viewers join at this many per second (their first key request). Default: 200.
    package var joinRate: Double = 200
    /// Key rotations (bursts) after everyone joined; each asks every viewer for the next period's key.
    package var rotations = 1
    /// Pause between the last join and a rotation, and between rotations.
    package var rotationInterval: Duration = .seconds(1)
    /// SPC container version the devices use.
    package var spcVersion: UInt32 = 2
    /// Deadline put on each job, from its send time. Default: 30 s.
    package var jobDeadline: Duration = .seconds(30)
    /// How long to wait for the last reply before giving up.
    package var replyTimeout: Duration = .seconds(60)
    /// librdkafka properties for both clients.
    package var kafkaProperties: [String: String] = [:]
    /// How long to wait for the brokers to answer (metadata of the requests topic) before the run
    /// fails with ``LoadGeneratorError/brokersUnreachable(brokers:topic:waited:reason:)``. Default: 15 s.
    package var connectTimeout: Duration = .seconds(15)

    package init(brokers: String) { self.brokers = brokers }
}
