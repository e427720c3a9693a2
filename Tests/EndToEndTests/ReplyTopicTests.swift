import FairPlayDevice
import Foundation
import KSMService
import KSMTestSupport
import Kafka
import Testing

/// A job's `reply-topic` header against the allowlist, through the real binary and broker.
@Suite struct ReplyTopicTests {
    @Test("A job naming a topic outside the allowlist never produces a record there: it is refused on the replies topic and counted")
    func outsideTheAllowlistNothingIsWritten() async throws {
        let fleet = try await Fleet()
        let worker = try await fleet.startWorker()
        // The topic a hostile producer names exists and holds one record of ours, so "nothing
        // written" is read from a real topic rather than inferred from a missing one.
        let stolen = "stolen.replies"
        let client = try await FleetClient(fleet: fleet, topics: ["fps.license.replies", "fps.license.replies.edge-1"])
        _ = try await client.producer.send(topic: stolen, key: Array("m".utf8), value: Array("marker".utf8), headers: [])
        let device = SimulatedDevice(trust: client.trust)

        let (routed, _) = try await client.request(
            id: "route-ok", account: "r1", device: device, session: 1,
            headers: [("reply-topic", Array("fps.license.replies.edge-1".utf8))])
        #expect(routed.status == .ok, "\(routed.reason)")
        #expect(client.messages(on: "fps.license.replies.edge-1").count == 1)

        let (refused, _) = try await client.request(
            id: "route-stolen", account: "r2", device: device, session: 2,
            headers: [("reply-topic", Array(stolen.utf8))])
        #expect(refused.status == .replyTopicRefused && refused.ckc == nil, "\(refused.status) \(refused.reason)")
        #expect(client.messages(on: "fps.license.replies").contains { (try? LicenseReply(json: $0.value))?.id == "route-stolen" })

        let metrics = try await FleetTests.scrape(port: worker.adminPort ?? 0) { $0.contains("ksm_reply_topic_refusals_total 1") }
        #expect(metrics.contains("ksm_reply_topic_refusals_total 1"), "\(metrics.split(separator: "\n").filter { $0.contains("reply_topic") })")
        #expect(metrics.contains("ksm_replies_total{status=\"replyTopicRefused\"} 1"))
        await client.close()

        // Everything on the named topic, from its start: only our marker.
        let reader = try await FleetClient(bootstrap: fleet.bootstrap, catalog: fleet.catalog, topics: [stolen])
        let deadline = ContinuousClock.now + .seconds(20)
        while reader.messages(on: stolen).isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        // A reply published late would land within the worker's publish retry; wait past it.
        try await Task.sleep(for: .seconds(2))
        #expect(reader.messages(on: stolen).map(\.value) == [Array("marker".utf8)])
        await reader.close()
        #expect(await worker.terminate() == 0)
    }

    @Test("reply-topics is checked at start-up: a bad entry is named by position and the worker does not start")
    func badSettingIsRefusedAtStartUp() async throws {
        let result = try await KSMBinary.run(
            ["serve", "--check-config", "--reply-topic", "fps.license.replies.*", "--reply-topic", "acme:bad topic"],
            environment: [
                "KSM_KAFKA_BROKERS": "127.0.0.1:1", "KSM_REDIS_URL": "redis://127.0.0.1:1/0",
                "KSM_CREDENTIALS": try KSMBinary.privateCredentials("Fixtures/test-credentials/certificates.json"),
            ])
        let stderr = String(decoding: result.stderr, as: UTF8.self)
        #expect(result.status == 64)
        #expect(stderr.contains("reply-topics entry 2 of 2"), "\(stderr)")
        let good = try await KSMBinary.run(
            ["serve", "--check-config", "--reply-topic", "edge.*", "--reply-topic", "acme:acme.out"],
            environment: [
                "KSM_KAFKA_BROKERS": "127.0.0.1:1", "KSM_REDIS_URL": "redis://127.0.0.1:1/0",
                "KSM_CREDENTIALS": try KSMBinary.privateCredentials("Fixtures/test-credentials/certificates.json"),
            ])
        #expect(good.status == 0, "\(String(decoding: good.stderr, as: UTF8.self))")
        #expect(String(decoding: good.stdout, as: UTF8.self).contains("edge.*,acme:acme.out"))
    }
}
