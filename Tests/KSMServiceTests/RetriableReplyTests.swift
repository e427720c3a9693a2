import FairPlay
import FairPlayDevice
import Foundation
import KSMTestSupport
import Kafka
import Licensing
import Testing
import Wire

@testable import KSMService

/// A retriable answer (`storeUnavailable`, `overloaded`, `rateLimited`: "no license, ask again")
/// never carries a CKC, on any path of the worker that makes one, and a reply reads back from its
/// bytes exactly as written, so neither the wire format (Base64, the JSON parser's string fast path)
/// nor the worker can make a refusal look like a license to a client.
@Suite(.timeLimit(.minutes(1)))
struct RetriableReplyTests {
    let world: World

    init() throws {
        world = try World()
    }

    // MARK: The wire

    @Test("every reply shape reads back from its bytes exactly as written")
    func everyShapeRoundTrips() throws {
        var random = SplitMix64(state: 0xC4C)
        let reasons = [
            "", "lease granted", "quote \" backslash \\ slash / tab \t newline \n nul \u{0} del \u{7F}", "é ü 日本 🎬",
            String(repeating: "long reason ", count: 300),
        ]
        let assets: [[UInt8]?] = [nil, Array(World.hdAsset.utf8), [0x00, 0x01, 0xFF, 0x0A], []]
        // Every padding case of base64 (length % 3), empty, and CKC-sized.
        let ckcLengths: [Int?] = [nil, 0, 1, 2, 3, 4, 5, 1_203, 1_204, 1_205]
        var checked = 0
        for status in KSMStatus.allKnown + [KSMStatus(rawValue: 1), KSMStatus(rawValue: .min), KSMStatus(rawValue: .max)] {
            for length in ckcLengths {
                let ckc = length.map { n in (0..<n).map { _ in UInt8.random(in: 0...255, using: &random) } }
                let asset = assets[checked % assets.count]
                let reply = LicenseReply(
                    id: "job-\(checked)", status: status, reason: reasons[checked % reasons.count], ckc: ckc,
                    leaseExpiresAt: checked % 2 == 0 ? nil : t0 + Int64(checked), assetID: asset,
                    hu: asset == nil ? nil : (0..<20).map { _ in UInt8.random(in: 0...255, using: &random) },
                    tenant: checked % 3 == 0 ? nil : "acme", account: checked % 3 == 0 ? nil : "alice-\(checked)", rule: "rule:\(checked)",
                    retryAfterMilliseconds: status.isRetriable ? Int64(checked) : nil)
                let bytes = reply.jsonBytes()
                let decoded = try LicenseReply(json: bytes)
                #expect(decoded == reply, "\(status) with a \(length.map(String.init) ?? "no") byte CKC")
                // A slice (not starting at index 0) decodes the same: the parser copies before scanning.
                #expect(try LicenseReply(json: ([0x20] + bytes)[1...]) == reply)
                #expect(decoded.isRetriable == status.isRetriable)
                guard case .object(let fields) = try JSONValue(parsing: bytes) else {
                    Issue.record("not an object")
                    continue
                }
                #expect((fields["ckc"] != nil) == (ckc != nil))
                #expect(fields["retriable"] == .bool(status.isRetriable))
                checked += 1
            }
        }
        #expect(checked == (KSMStatus.allKnown.count + 3) * ckcLengths.count)
    }

    // MARK: The worker's retriable paths

    func seededStore() async throws -> InMemoryLicenseStore {
        let store = InMemoryLicenseStore()
        try await world.seed(store)
        return store
    }

    func makeWorker(_ processor: LicenseProcessor) -> LicenseWorker {
        LicenseWorker(configuration: WorkerConfiguration(brokers: "unused:9092"), processor: processor, logger: quietLogger)
    }

    static func message(_ job: LicenseJob, offset: Int64) -> KafkaMessage {
        KafkaMessage(topic: "jobs", partition: 0, offset: offset, key: nil, value: job.jsonBytes(), headers: [("correlation-id", Array(job.id.value.utf8))])
    }

    /// The outcomes as a client reads them off the reply topic, each checked for fail-closed: a
    /// retriable reply has no CKC, and the `ksm-status` header says what the body says.
    func published(_ outcomes: [JobOutcome], for messages: [KafkaMessage], by worker: LicenseWorker) throws -> [LicenseReply] {
        try zip(outcomes, messages).map { outcome, message in
            let record = worker.routing.record(outcome, for: message)
            let reply = try LicenseReply(json: record.value)
            #expect(!(reply.isRetriable && reply.ckc != nil), "a retriable reply carried a license: \(reply.id) \(reply.status)")
            #expect(record.headers.first { $0.0 == "ksm-status" }?.1 == Array(String(reply.status.rawValue).utf8))
            return reply
        }
    }

    @Test("a shed job is answered overloaded without a CKC, even beside a processed copy of the same job")
    func shedJobCarriesNoLicense() async throws {
        let worker = makeWorker(try world.processor(store: try await seededStore(), pool: sharedPool))
        let x = try World.job("x-1", device: world.deviceA, World.options(World.hdAsset))
        let y = try World.job("y-1", account: "bob", device: world.deviceA, World.options(World.hdAsset))
        // The same message twice (a redelivery beside a shed copy), and another job shed.
        let messages = [Self.message(x.job, offset: 0), Self.message(x.job, offset: 0), Self.message(y.job, offset: 1)]
        var batch = messages.enumerated().map { ScheduledJob(message: $1, sequence: UInt64($0)) }
        batch[0].retryAfterMilliseconds = 1_500
        batch[2].retryAfterMilliseconds = 900
        let replies = try published(await worker.answerer.outcomes(for: batch), for: messages, by: worker)
        #expect(replies.map(\.status) == [.overloaded, .ok, .overloaded])
        #expect(replies[0].ckc == nil && replies[0].leaseExpiresAt == nil && replies[0].retryAfterMilliseconds == 1_500)
        #expect(replies[2].ckc == nil && replies[2].retryAfterMilliseconds == 900)
        #expect(try CKCOpener.open(try #require(replies[1].ckc), session: x.session).contentKey == world.keys[World.hdAsset]?.key)
    }

    @Test("a store outage that outlasts the worker's retries is answered storeUnavailable without a CKC")
    func storeOutageCarriesNoLicense() async throws {
        let store = ScriptedStore(try await seededStore())
        let worker = makeWorker(try world.processor(store: store, pool: sharedPool))
        let play = MediaPlaybackInfo(creationDate: 1, state: .readyToPlay, sessionID: 7)
        let jobs = [
            try World.job("plain-1", device: world.deviceA, World.options(World.hdAsset)).job,
            try World.job("leased-1", device: world.deviceA, World.options(World.liveAsset, playback: play)).job,
        ]
        let messages = jobs.enumerated().map { Self.message($1, offset: Int64($0)) }
        let batch = messages.enumerated().map { ScheduledJob(message: $1, sequence: UInt64($0)) }
        // The fetch fails: nothing was decided.
        store.failFetch = LicenseStoreError(.unavailable, "connection refused", isRetriable: true)
        var replies = try published(await worker.answerer.outcomes(for: batch), for: messages, by: worker)
        #expect(replies.allSatisfy { $0.status == .storeUnavailable && $0.ckc == nil && (1_000...2_000).contains($0.retryAfterMilliseconds ?? 0) })
        // The lease round trip fails: the keys were unwrapped and the policy said yes, yet no license.
        store.failFetch = nil
        store.failLeases = LicenseStoreError(.unavailable, "timeout", isRetriable: true)
        replies = try published(await worker.answerer.outcomes(for: batch), for: messages, by: worker)
        #expect(replies.allSatisfy { $0.status == .storeUnavailable && $0.ckc == nil && $0.leaseExpiresAt == nil }, "\(replies.map(\.status))")
    }

    @Test("a reply that cannot be stored is answered storeUnavailable, its CKC dropped")
    func unstorableReplyCarriesNoLicense() async throws {
        let guards = FailingReplyStore()
        let processor = LicenseProcessor(
            keyServer: try world.keyServer(), store: try await seededStore(), keyring: world.keyring, pool: sharedPool,
            logger: quietLogger, guards: JobGuards(store: guards))
        let worker = makeWorker(processor)
        let job = try World.job("unstored-1", device: world.deviceA, World.options(World.hdAsset)).job
        let messages = [Self.message(job, offset: 0)]
        // Every attempt builds a CKC and then fails to keep it.
        let replies = try published(await worker.answerer.outcomes(for: [ScheduledJob(message: messages[0], sequence: 0)]), for: messages, by: worker)
        #expect(replies.map(\.status) == [.storeUnavailable])
        #expect(replies[0].ckc == nil && replies[0].leaseExpiresAt == nil && replies[0].rule == "store:unavailable")
        #expect(guards.storeAttempts == 3, "the first answer and the worker's two retries")
    }
}

/// A guard store whose `storeReplies` is always unavailable (Redis gone between the CKCs and the
/// store round trip); the rest is the in-memory store.
private final class FailingReplyStore: JobGuardStore, @unchecked Sendable {
    // @unchecked: `attempts` sits behind `lock`.
    private let inner = InMemoryJobGuardStore()
    private let lock = NSLock()
    private var attempts = 0

    var storeAttempts: Int { lock.withLock { attempts } }

    func admit(_ requests: [AdmissionRequest], nowMilliseconds: Int64, rateWindowMilliseconds: Int64) async throws(LicenseStoreError) -> AdmissionBatch {
        try await inner.admit(requests, nowMilliseconds: nowMilliseconds, rateWindowMilliseconds: rateWindowMilliseconds)
    }

    func claim(_ claims: [SPCClaim]) async throws(LicenseStoreError) -> [Bool] {
        try await inner.claim(claims)
    }

    func storeReplies(_ replies: [StoredReply]) async throws(LicenseStoreError) -> [StoredAnswer?] {
        lock.withLock { attempts += 1 }
        throw LicenseStoreError(.unavailable, "connection reset", isRetriable: true)
    }

    func putGuardSettings(_ settings: GuardSettings, tenant: StoreIdentifier) async throws(LicenseStoreError) {
        try await inner.putGuardSettings(settings, tenant: tenant)
    }
}
