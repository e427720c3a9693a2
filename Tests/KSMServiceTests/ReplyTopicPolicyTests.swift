import Kafka
import Licensing
import Testing

@testable import KSMService

/// The `reply-topic` allowlist: what a job may name, and what the worker does with one it may not.
@Suite struct ReplyTopicPolicyTests {
    static func id(_ text: String) throws -> StoreIdentifier { try StoreIdentifier(text) }

    @Test("By default the replies topic and topics below it are allowed, nothing else")
    func defaultAllowsTheRepliesTopicAndItsPrefix() throws {
        let policy = ReplyTopicPolicy.defaultPolicy(repliesTopic: "fps.license.replies")
        let acme = try Self.id("acme")
        #expect(policy.allows("fps.license.replies", tenant: acme))
        #expect(policy.allows("fps.license.replies.edge-7", tenant: acme))
        #expect(policy.allows("fps.license.replies.edge-7", tenant: nil))
        // A prefix never lets through a name Kafka would refuse (or a broker would auto-create).
        let tooLong = "fps.license.replies." + String(repeating: "x", count: 240)
        for refused in [
            "fps.license.repliesX", "fps.license.dlq", "fps.license.requests", "other", "", "fps.license.replie", "fps.license.replies.x/y", tooLong,
        ] {
            #expect(!policy.allows(refused, tenant: acme), "\(refused)")
        }
        #expect(policy.entries == ["fps.license.replies", "fps.license.replies.*"])
    }

    @Test("A tenant with entries of its own is limited to them; others get the shared entries; the replies topic stays allowed")
    func perTenantEntriesLimitThatTenant() throws {
        let policy = try ReplyTopicPolicy(entries: ["edge.*", "acme:acme.replies.*", "acme:acme.audit"])
        let acme = try Self.id("acme")
        let globex = try Self.id("globex")
        #expect(policy.allows("acme.replies.1", tenant: acme) && policy.allows("acme.audit", tenant: acme))
        #expect(!policy.allows("edge.1", tenant: acme))
        #expect(policy.allows("edge.1", tenant: globex) && !policy.allows("acme.replies.1", tenant: globex))
        #expect(!policy.allows("acme.audit", tenant: nil))
        #expect(policy.entries == ["edge.*", "acme:acme.replies.*", "acme:acme.audit"])
    }

    @Test("Tenants are told apart by their bytes: an NFD spelling does not get an NFC tenant's entries")
    func tenantsCompareByBytes() throws {
        let policy = try ReplyTopicPolicy(entries: ["caf\u{E9}:cafe.replies"])
        #expect(policy.allows("cafe.replies", tenant: try Self.id("caf\u{E9}")))
        #expect(!policy.allows("cafe.replies", tenant: try Self.id("cafe\u{301}")))
    }

    @Test(
        "Entries that are no topic or prefix are refused by position",
        arguments: [
            ["bad topic"], ["*"], ["a*b"], ["x", "t{x}:y"], [":y"], ["a:"], [String(repeating: "a", count: 250)], ["."],
        ])
    func badEntriesAreRefused(entries: [String]) {
        #expect(throws: ReplyTopicPolicy.InvalidEntry.self) { try ReplyTopicPolicy(entries: entries) }
        do {
            _ = try ReplyTopicPolicy(entries: entries)
        } catch {
            #expect(error.description.contains("reply-topics entry \(entries.count) of \(entries.count)"), "\(error.description)")
        }
    }

    @Test("A job naming a topic outside the allowlist is refused before any work and answered on the replies topic; an allowed one is routed")
    func workerRefusesAndReroutes() async throws {
        let world = try World()
        let store = InMemoryLicenseStore()
        try await world.seed(store)
        let processor = try world.processor(store: store, pool: sharedPool)
        var configuration = WorkerConfiguration(brokers: "unused:9092")
        configuration.replyTopics = try ReplyTopicPolicy(entries: ["fps.license.replies.*", "acme:acme.out"])
        let worker = LicenseWorker(configuration: configuration, processor: processor, logger: quietLogger)
        let named = ["acme.out", "stolen.replies", "fps.license.replies.edge", nil, "bad\u{0}name", "fps.license.replies"]
        let messages = try named.enumerated().map { n, topic in
            let job = try World.job("route-\(n)", device: world.deviceA, World.options(World.hdAsset)).job
            return KafkaMessage(
                topic: "jobs", partition: 0, offset: Int64(n), key: nil, value: job.jsonBytes(),
                headers: topic.map { [("reply-topic", Array($0.utf8))] } ?? [])
        }
        let outcomes = await worker.answerer.outcomes(for: messages.enumerated().map { ScheduledJob(message: $1, sequence: UInt64($0)) })
        let records = zip(outcomes, messages).map { worker.routing.record($0, for: $1) }
        func reply(_ n: Int) -> LicenseReply? { if case .reply(let r) = outcomes[n] { r } else { nil } }
        #expect(reply(0)?.status == .ok && records[0].topic == "acme.out")
        // acme has entries of its own, so the shared prefix is not acme's.
        for n in [1, 2, 4] {
            #expect(
                reply(n)?.status == .replyTopicRefused && reply(n)?.ckc == nil && reply(n)?.rule == "reply-topic:not-allowed",
                "\(n): \(String(describing: reply(n)))")
            #expect(records[n].topic == "fps.license.replies")
        }
        #expect(reply(1)?.reason.contains("stolen.replies") == true)
        #expect(reply(4)?.reason.contains("no Kafka topic") == true)
        #expect(reply(3)?.status == .ok && records[3].topic == "fps.license.replies")
        // The replies topic is the worker's, allowed whatever the policy says.
        #expect(reply(5)?.status == .ok && records[5].topic == "fps.license.replies")
        #expect(worker.statistics.snapshot.replyTopicRefusals == 3)
        #expect(KSMStatus.replyTopicRefused.name == "replyTopicRefused" && !KSMStatus.replyTopicRefused.isRetriable)
    }
}
