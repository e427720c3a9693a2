import FairPlay
import FairPlayDevice
import Foundation
import KSMTestSupport
import Kafka
import Licensing
import Testing
import Wire

@testable import KSMService

/// Thousands of corrupted job envelopes through the decoder and the worker: every one is decoded
/// or refused with `invalidJob` naming a known field (or the body), none crashes, and whatever
/// decodes re-encodes to a job that decodes to itself. The libFuzzer target
/// (FuzzTesting/Sources/FuzzLicenseJob) explores the same surface without a seed budget.
@Suite(.timeLimit(.minutes(3)))
struct JobDecoderMutationTests {
    static let fields: Set<String> = ["id", "tenant", "account", "spc", "deadline", "priority", "entitlement", "persistent", "stream-id", "title-id"]

    /// Structural tokens and hostile values that random byte flips rarely produce.
    static let splices: [String] = [
        "{", "}", "[", "]", ",", ":", "\"", "\\", "\\u0000", "\\ud800", "null", "true", "false", "-0", "1e999", "-1",
        "9223372036854775808", "0.5", "\"\"", "{}", "[]", String(repeating: "[", count: 200), "\u{0}", "\u{7F}", "é", "\u{FEFF}",
        "\"id\":", "\"spc\":\"====\"", "\"deadline\":1.5", "\"priority\":\"urgent\"", "\"tenant\":\"a:b\"", "\"tenant\":\"{t}\"",
        "\"account\":\"\(String(repeating: "x", count: 129))\"", "\"persistent\":\"yes\"", "\"stream-id\":\"zz\"",
    ]

    static func seeds() -> [[UInt8]] {
        let spc = Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }).base64EncodedString()
        return [
            #"{"id":"job-1","tenant":"acme","account":"alice","spc":"\#(spc)"}"#,
            #"{"id":"job-2","tenant":"acme","account":"bob","spc":"\#(spc)","deadline":1700000000000,"priority":"continuity","entitlement":"a.b.c"}"#,
            #"{"id":"job-3","tenant":"globex","account":"c","spc":"\#(spc)","persistent":true,"stream-id":"00112233445566778899aabbccddeeff","title-id":"ffeeddccbbaa99887766554433221100","extra":[1,{"x":null}]}"#,
        ].map { Array($0.utf8) }
    }

    static func mutate(_ seed: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = seed
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<7, using: &random) {
            case 0 where !bytes.isEmpty: bytes[position] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            case 1 where !bytes.isEmpty: bytes[position] = UInt8.random(in: 0...255, using: &random)
            case 2 where !bytes.isEmpty: bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...8, using: &random)))
            case 3: bytes.insert(contentsOf: Array(splices.randomElement(using: &random)!.utf8), at: position)
            case 4: bytes = Array(bytes.prefix(position))
            case 5 where !bytes.isEmpty:
                // Duplicate a slice (repeated keys, doubled values).
                let end = min(bytes.count, position + Int.random(in: 1...40, using: &random))
                bytes.insert(contentsOf: bytes[position..<end], at: end)
            default: bytes.append(UInt8.random(in: 0...255, using: &random))
            }
        }
        return bytes
    }

    @Test("50,000 seeded mutants of job envelopes: decoded or refused with a named field, never a crash")
    func decoderMutants() async throws {
        var random = SplitMix64(state: 0x5EED_0006)
        var decoded = 0
        var refused = 0
        for seed in Self.seeds() {
            for round in 0..<16_667 {
                // The suite runs every test at once on two cores: a loop this long yields now and
                // then instead of holding a cooperative thread for seconds.
                if round % 500 == 0 { await Task.yield() }
                let mutant = Self.mutate(seed, &random)
                do {
                    let job = try LicenseJob(json: mutant)
                    decoded += 1
                    // What decodes must survive its own encoding unchanged.
                    #expect(try LicenseJob(json: job.jsonBytes()) == job)
                    // The writer's member-by-member bytes are the sorted tree's bytes.
                    #expect(job.jsonBytes() == job.jsonValue.encoded())
                } catch {
                    refused += 1
                    #expect(!error.reason.isEmpty)
                    if let field = error.field { #expect(Self.fields.contains(field), "unknown field \(field)") }
                    // Identity echoed back must be short enough to route the reply.
                    for value in [error.id, error.tenant, error.account] { #expect((value?.utf8.count ?? 0) <= StoreIdentifier.maximumLength) }
                }
            }
        }
        #expect(decoded > 1_000 && refused > 10_000, "decoded \(decoded), refused \(refused)")
    }

    @Test("JSONParser alone: 20,000 random and spliced inputs parse or throw with an in-range offset")
    func parserMutants() async {
        var random = SplitMix64(state: 0x0000_F022)
        for round in 0..<20_000 {
            if round % 500 == 0 { await Task.yield() }
            var input: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                if Bool.random(using: &random) {
                    input += Array(Self.splices.randomElement(using: &random)!.utf8)
                } else {
                    input.append(UInt8.random(in: 0...255, using: &random))
                }
            }
            do {
                let value = try JSONParser.parse(input)
                // What parses is written back as JSON that parses again.
                #expect((try? JSONParser.parse(value.encoded())) != nil)
            } catch {
                #expect(error.offset >= 0 && error.offset <= input.count)
            }
        }
    }

    /// Hostile envelopes through the worker's own path (decode on arrival, answer, record): each
    /// gets exactly one outcome; an unroutable one goes to the dead-letter topic.
    @Test func hostileEnvelopesThroughTheWorker() async throws {
        let world = try World()
        let store = InMemoryLicenseStore()
        try await world.seed(store)
        let processor = try world.processor(store: store, pool: sharedPool)
        let worker = LicenseWorker(configuration: WorkerConfiguration(brokers: "unused:9092"), processor: processor, logger: quietLogger)
        let good = try World.job("good-1", device: world.deviceA, World.options(World.hdAsset)).job
        let foreign = try World.job("foreign-1", tenant: "globex", device: world.deviceA, World.options(World.hdAsset)).job
        let nobody = try World.job("nobody-1", tenant: "nobody", device: world.deviceA, World.options(World.hdAsset)).job
        var oversized = Array(#"{"id":"big-1","tenant":"acme","account":"alice","spc":""#.utf8)
        oversized += Array(repeating: UInt8(ascii: "A"), count: LicenseJob.maximumEncodedSize)
        oversized += Array(#""}"#.utf8)
        let payloads: [[UInt8]] = [
            good.jsonBytes(),
            oversized,
            Array(#"{"id":"types-1","tenant":"acme","account":7,"spc":"AAAA"}"#.utf8),
            Array(#"{"id":"types-2","tenant":["acme"],"account":"a","spc":"AAAA"}"#.utf8),
            Array(#"{"id":"types-3","tenant":"acme","account":"a","spc":"AAAA","deadline":"soon"}"#.utf8),
            Array(#"{"id":"types-4","tenant":"acme","account":"a","spc":"AAAA","persistent":1}"#.utf8),
            foreign.jsonBytes(),
            nobody.jsonBytes(),
            Array(#"[1,2,3]"#.utf8),
        ]
        let messages = payloads.enumerated().map { n, value in
            KafkaMessage(topic: "jobs", partition: 0, offset: Int64(n), key: nil, value: value, headers: [("correlation-id", Array("c-\(n)".utf8))])
        }
        let outcomes = await worker.answerer.outcomes(for: messages.enumerated().map { ScheduledJob(message: $1, sequence: UInt64($0)) })
        #expect(outcomes.count == payloads.count)
        func reply(_ n: Int) -> LicenseReply? { if case .reply(let r) = outcomes[n] { r } else { nil } }
        #expect(reply(0)?.status == .ok)
        // Over 256 KiB: refused before parsing, so not even the ID is read: dead-lettered.
        guard case .deadLetter(let reason) = outcomes[1] else {
            Issue.record("oversized job was not dead-lettered")
            return
        }
        #expect(reason.contains("exceeds"))
        #expect(worker.routing.record(outcomes[1], for: messages[1]).topic == worker.configuration.deadLetterTopic)
        for (n, field) in [(2, "account"), (3, "tenant"), (4, "deadline"), (5, "persistent")] {
            #expect(reply(n)?.status == .invalidJob && reply(n)?.rule == "job:\(field)", "\(String(describing: reply(n)))")
        }
        // Wrong tenant: an SPC for A's certificate under globex; an unknown tenant.
        #expect(reply(6)?.status == .certificateNotOwnedByTenant)
        #expect(reply(7)?.status == .unknownTenant)
        guard case .deadLetter = outcomes[8] else {
            Issue.record("a JSON array was not dead-lettered")
            return
        }
        // Replies keep the job's correlation ID.
        let record = worker.routing.record(outcomes[2], for: messages[2])
        #expect(record.headers.first { $0.0 == "correlation-id" }?.1 == Array("c-2".utf8))
        #expect(!record.headers.contains { $0.0 == "ksm-duplicate" })
    }

    @Test func duplicatesAreMarkedOnTheWire() async throws {
        let world = try World()
        let store = InMemoryLicenseStore()
        try await world.seed(store)
        let processor = LicenseProcessor(
            keyServer: try world.keyServer(), store: store, keyring: world.keyring, pool: sharedPool,
            logger: quietLogger, guards: JobGuards(store: InMemoryJobGuardStore()))
        let worker = LicenseWorker(configuration: WorkerConfiguration(brokers: "unused:9092"), processor: processor, logger: quietLogger)
        let job = try World.job("wire-1", device: world.deviceA, World.options(World.hdAsset)).job
        let message = KafkaMessage(topic: "jobs", partition: 0, offset: 0, key: nil, value: job.jsonBytes(), headers: [])
        let first = await worker.answerer.outcomes(for: [ScheduledJob(message: message, sequence: 0)])
        let second = await worker.answerer.outcomes(for: [ScheduledJob(message: message, sequence: 1)])
        let (a, b) = (worker.routing.record(first[0], for: message), worker.routing.record(second[0], for: message))
        #expect(a.value == b.value, "the redelivered job's reply must be byte-identical")
        #expect(!a.headers.contains { $0.0 == "ksm-duplicate" })
        #expect(b.headers.first { $0.0 == "ksm-duplicate" }?.1 == Array("1".utf8))
    }
}
