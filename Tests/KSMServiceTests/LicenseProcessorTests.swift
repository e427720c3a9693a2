import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import KSMTestSupport
import Licensing
import RedisStore
import Testing
import Wire

/// The worker's pipeline end to end, with the simulated device as the oracle: every CKC is opened
/// the way a device opens it, and must carry the key the store holds (wrapped) for the asset.
@Suite(.timeLimit(.minutes(1)))
struct LicenseProcessorTests {
    let world: World

    init() throws {
        world = try World()
    }

    func memoryStore() async throws -> InMemoryLicenseStore {
        let store = InMemoryLicenseStore()
        try await world.seed(store)
        return store
    }

    /// A batch covering every content type, both certificates, SPC v1 and v2, and two refusals.
    func mixedBatch() throws -> (jobs: [LicenseJob], sessions: [DeviceSession?]) {
        let w = world
        let hd = try World.job("j-hd", device: w.deviceA, World.options(World.hdAsset))
        let uhd = try World.job("j-uhd", device: w.deviceA, World.options(World.uhdAsset, main: true))
        let audio = try World.job("j-audio", device: w.deviceA, World.options(World.audioAsset, spcVersion: 1))
        let sd = try World.job("j-sd", tenant: "globex", account: "bob", device: w.deviceB, World.options(World.sdAsset, spcVersion: 1))
        // A Baseline client asking for UHD: Apple's rules refuse it.
        let uhdBaseline = try World.job("j-uhd-baseline", device: w.deviceA, World.options(World.uhdAsset))
        let garbage = LicenseJob(id: id("j-garbage"), tenant: id("acme"), account: id("alice"), spc: Array(repeating: 0x42, count: 300))
        return ([hd.job, uhd.job, audio.job, sd.job, uhdBaseline.job, garbage], [hd.session, uhd.session, audio.session, sd.session, nil, nil])
    }

    /// Checks the mixed batch's replies (shared by the in-memory and the Redis test).
    func checkMixed(_ replies: [LicenseReply], _ jobs: [LicenseJob], _ sessions: [DeviceSession?]) throws {
        try #require(replies.count == jobs.count)
        #expect(replies.map(\.id) == jobs.map(\.id.value))
        let expected: [(KSMStatus, String, String?)] = [
            (.ok, "policy:granted", World.hdAsset), (.ok, "policy:granted", World.uhdAsset),
            (.ok, "policy:granted", World.audioAsset), (.ok, "policy:granted", World.sdAsset),
            (KSMStatus(.clientSecurityLevel), "security-level:below-minimum", nil), (KSMStatus(.spcVersionError), "fairplay:open", nil),
        ]
        for (i, (status, rule, asset)) in expected.enumerated() {
            let reply = replies[i]
            #expect(reply.status == status, "\(reply.id): \(reply.status) \(reply.reason)")
            #expect(reply.rule == rule, "\(reply.id)")
            #expect(reply.tenant == jobs[i].tenant.value && reply.account == jobs[i].account.value)
            guard let asset, let session = sessions[i] else {
                #expect(reply.ckc == nil)
                continue
            }
            let ckc = try #require(reply.ckc, "\(reply.id) has no CKC")
            let opened = try CKCOpener.open(ckc, session: session)
            #expect(opened.contentKey == world.keys[asset]!.key, "\(reply.id) carries the wrong key")
            #expect(opened.contentIV == world.keys[asset]!.iv)
            #expect(reply.assetIDText == asset)
            #expect(reply.hu == session.hu)
            #expect(reply.leaseExpiresAt == nil)
            #expect(opened.keyDuration == nil, "no playback state, so no lease")
        }
        // Apple's default rules per content type, as the device reads them from the CKC.
        let hd = try CKCOpener.open(replies[0].ckc!, session: sessions[0]!)
        #expect(hd.requiredSecurityLevel == .baseline && hd.hdcp == .type0)
        let uhd = try CKCOpener.open(replies[1].ckc!, session: sessions[1]!)
        #expect(uhd.requiredSecurityLevel == .main && uhd.hdcp == .type1)
        let audio = try CKCOpener.open(replies[2].ckc!, session: sessions[2]!)
        #expect(audio.requiredSecurityLevel == .audio && audio.hdcp == .notRequired)
        let sd = try CKCOpener.open(replies[3].ckc!, session: sessions[3]!)
        #expect(sd.requiredSecurityLevel == .baseline && sd.hdcp == .notRequired)
        #expect(replies[4].reason.contains("below the required main"))
    }

    @Test func mixedBatchIssuesCKCsThatOpenWithTheRightKeys() async throws {
        let store = ScriptedStore(try await memoryStore())
        let processor = try world.processor(store: store, pool: sharedPool)
        let (jobs, sessions) = try mixedBatch()
        let replies = await processor.process(jobs, now: t0)
        try checkMixed(replies, jobs, sessions)
        #expect(store.fetchCalls == 1, "one store round trip for the batch")
        #expect(store.leaseCalls == 0, "no playback state in the batch, so no lease round trip")
    }

    @Test func unknownTenant() async throws {
        let processor = try world.processor(store: try await memoryStore(), pool: sharedPool)
        let job = try World.job("j1", tenant: "nobody", device: world.deviceA, World.options(World.hdAsset)).job
        let reply = try #require(await processor.process([job], now: t0).first)
        #expect(reply.status == .unknownTenant && reply.rule == "tenant:unknown" && reply.ckc == nil)
        #expect(reply.reason.contains("nobody"))
    }

    @Test func tenantMismatchIsRefused() async throws {
        let processor = try world.processor(store: try await memoryStore(), pool: sharedPool)
        // Tenant acme, but an SPC for globex's certificate (B); and the other way round.
        let aWithB = try World.job("j1", tenant: "acme", device: world.deviceB, World.options(World.hdAsset)).job
        let bWithA = try World.job("j2", tenant: "globex", device: world.deviceA, World.options(World.sdAsset)).job
        let replies = await processor.process([aWithB, bWithA], now: t0)
        for reply in replies {
            #expect(reply.status == .certificateNotOwnedByTenant, "\(reply.reason)")
            #expect(reply.rule == "tenant:certificate" && reply.ckc == nil)
        }
        #expect(replies[0].reason.contains(HexEncoding.encode(world.credentialB.certificateHash)))
    }

    @Test func certificateThisServerDoesNotHoldIsApplesInvalidCertificate() async throws {
        let processor = try world.processor(store: try await memoryStore(), pool: sharedPool, onlyA: true)
        let job = try World.job("j1", tenant: "globex", device: world.deviceB, World.options(World.sdAsset)).job
        let reply = try #require(await processor.process([job], now: t0).first)
        #expect(reply.status == KSMStatus(.invalidCertificate))
        #expect(reply.status.name == "invalidCertificateErr")
    }

    @Test func unknownAssetHasNoContentKey() async throws {
        let processor = try world.processor(store: try await memoryStore(), pool: sharedPool)
        let job = try World.job("j1", device: world.deviceA, World.options("skd://acme/never-heard-of-it")).job
        let reply = try #require(await processor.process([job], now: t0).first)
        #expect(reply.status == .noContentKey && reply.rule == "asset:no-content-key")
        #expect(reply.assetIDText == "skd://acme/never-heard-of-it")
    }

    @Test func missingAndInvalidPolicyFailClosed() async throws {
        let processor = try world.processor(store: try await memoryStore(), pool: sharedPool)
        let none = try World.job("j1", tenant: "initech", device: world.deviceA, World.options(World.noPolicyAsset)).job
        let bad = try World.job("j2", device: world.deviceA, World.options(World.badPolicyAsset)).job
        let replies = await processor.process([none, bad], now: t0)
        #expect(replies[0].status == .noPolicy && replies[0].ckc == nil)
        #expect(replies[1].status == .invalidPolicy && replies[1].reason.contains("content-type"))
    }

    @Test func keyWrappedUnderAnUnknownKEKFailsToUnwrap() async throws {
        let processor = try world.processor(store: try await memoryStore(), pool: sharedPool)
        let job = try World.job("j1", tenant: "hooli", device: world.deviceA, World.options(World.foreignKEKAsset)).job
        let reply = try #require(await processor.process([job], now: t0).first)
        #expect(reply.status == .keyUnwrapFailed && reply.rule == "key:unwrap")
        #expect(reply.reason.contains("kek-elsewhere"))
    }

    @Test func expiredDeadlineIsAnsweredWithoutOpeningTheSPC() async throws {
        let store = ScriptedStore(try await memoryStore())
        let processor = try world.processor(store: store, pool: sharedPool)
        // Garbage SPCs: opening one would answer parserErr; an expired job must never get that far.
        let expired = (0..<3).map { n in
            LicenseJob(id: id("late-\(n)"), tenant: id("acme"), account: id("alice"), spc: [0xDE, 0xAD], deadline: t0 - 1 + Int64(n == 2 ? 1 : 0))
        }
        let replies = await processor.process(expired, now: t0)
        #expect(replies.allSatisfy { $0.status == .deadlineExpired && $0.rule == "deadline" && $0.hu == nil })
        #expect(store.fetchCalls == 0 && store.leaseCalls == 0, "nothing left to ask the store about")

        // A deadline in the future is honoured as usual.
        let onTime = try World.job("on-time", device: world.deviceA, World.options(World.hdAsset), deadline: t0 + 1)
        let reply = try #require(await processor.process([onTime.job], now: t0).first)
        #expect(reply.status == .ok)
    }

    @Test func leaseLimitRenewalAndIdempotentRedelivery() async throws {
        let memory = try await memoryStore()
        let store = ScriptedStore(memory)
        let processor = try world.processor(store: store, pool: sharedPool)
        func playback(_ session: UInt64, _ state: PlaybackState = .readyToPlay) -> MediaPlaybackInfo {
            MediaPlaybackInfo(creationDate: UInt32(t0 / 1000), state: state, sessionID: session)
        }
        // acme's live asset leases for 600 s; the tenant record allows 2 streams. Three devices start playing.
        let phones = (0..<3).map { _ in SimulatedDevice(trust: world.trustA) }
        let starts = try (0..<3).map { n in
            try World.job("start-\(n)", device: phones[n], World.options(World.liveAsset, playback: playback(UInt64(100 + n))))
        }
        // A different account is not affected.
        let other = try World.job("bob-1", account: "bob", device: phones[2], World.options(World.liveAsset, playback: playback(7)))
        let first = await processor.process(starts.map(\.job) + [other.job], now: t0)
        #expect(store.leaseCalls == 1, "one lease round trip for the batch")
        for n in [0, 1, 3] {
            #expect(first[n].status == .ok, "\(first[n].reason)")
            #expect(first[n].leaseExpiresAt == t0 + 600_000)
        }
        for n in [0, 1] {
            let opened = try CKCOpener.open(first[n].ckc!, session: starts[n].session)
            #expect(opened.keyDuration == .lease(600))
            #expect(opened.contentKey == world.keys[World.liveAsset]!.key)
        }
        #expect(first[2].status == .tooManyStreams && first[2].rule == "lease:too-many-streams")
        #expect(first[2].reason.contains("holds 2 of 2"), "\(first[2].reason)")
        #expect(first[2].ckc == nil && first[2].leaseExpiresAt == nil)

        // 500 s later the first phone's lease is about to expire: state 3 renews it.
        let later = t0 + 500_000
        let renewal = try World.job("renew-0", device: phones[0], World.options(World.liveAsset, playback: playback(100, .leaseRenewal)))
        let renewed = try #require(await processor.process([renewal.job], now: later).first)
        #expect(renewed.status == .ok, "\(renewed.reason)")
        #expect(renewed.leaseExpiresAt == later + 600_000)
        #expect(renewed.reason.contains("renewed"))
        #expect(try CKCOpener.open(renewed.ckc!, session: renewal.session).keyDuration == .lease(600))

        // Redelivery of the same jobs (same IDs, same SPCs): same lease results, no new slots.
        let slotsBefore = try await memory.listSlots(tenant: id("acme"), account: id("alice"), nowMilliseconds: later)
        let again = await processor.process(starts.map(\.job), now: later + 1)
        #expect(again.map(\.status) == [.ok, .ok, .tooManyStreams])
        #expect(again[0].leaseExpiresAt == first[0].leaseExpiresAt && again[1].leaseExpiresAt == first[1].leaseExpiresAt)
        #expect(again[2].reason == first[2].reason)
        let slotsAfter = try await memory.listSlots(tenant: id("acme"), account: id("alice"), nowMilliseconds: later + 1)
        #expect(slotsAfter == slotsBefore && slotsAfter.count == 2)
        // The redelivered CKC's lease ends with the slot: 100 s remain of the original 600.
        let redelivered = try CKCOpener.open(again[1].ckc!, session: starts[1].session)
        #expect(redelivered.keyDuration == .lease(100))
    }

    @Test func assetPolicyLeaseDuration() async throws {
        let processor = try world.processor(store: try await memoryStore(), pool: sharedPool)
        let play = MediaPlaybackInfo(creationDate: 1, state: .readyToPlay, sessionID: 9)
        let job = try World.job("a1", device: world.deviceA, World.options(World.shortLiveAsset, playback: play))
        let reply = try #require(await processor.process([job.job], now: t0).first)
        #expect(reply.status == .ok && reply.leaseExpiresAt == t0 + 120_000)
        #expect(try CKCOpener.open(reply.ckc!, session: job.session).keyDuration == .lease(120))
    }

    @Test func retriableStoreFailureAnswersEveryJobStoreUnavailable() async throws {
        let store = ScriptedStore(try await memoryStore())
        store.failFetch = LicenseStoreError(.unavailable, "connect to 10.1.2.3:6379: Connection refused", isRetriable: true)
        let processor = try world.processor(store: store, pool: sharedPool)
        let (jobs, _) = try mixedBatch()
        let valid = Array(jobs.prefix(5))
        let replies = await processor.process(valid, now: t0)
        #expect(replies.count == valid.count)
        #expect(replies.allSatisfy { $0.status == .storeUnavailable && $0.isRetriable && $0.ckc == nil && $0.rule == "store:unavailable" })
        // The reason names the step and what to do; the backend's own text (an internal address
        // here) stays in the worker's log.
        #expect(
            replies.allSatisfy {
                $0.reason
                    == "license store unavailable while reading the tenant, content key and policy; nothing was granted; send the same job again after retry-after-ms"
            },
            "\(replies.map(\.reason))")
        #expect(replies.allSatisfy { !$0.reason.contains("10.1.2.3") && !$0.reason.contains("(") })

        // The same when the lease round trip fails: no license without a lease decision either.
        store.failFetch = nil
        store.failLeases = LicenseStoreError(.unavailable, "timeout", isRetriable: true)
        let play = MediaPlaybackInfo(creationDate: 1, state: .readyToPlay, sessionID: 1)
        let leased = try World.job("l1", device: world.deviceA, World.options(World.liveAsset, playback: play)).job
        let plain = try World.job("p1", device: world.deviceA, World.options(World.hdAsset)).job
        let second = await processor.process([leased, plain], now: t0)
        #expect(second.map(\.status) == [.storeUnavailable, .storeUnavailable])

        // A non-retriable store error is an internal error, also fail closed.
        store.failLeases = nil
        store.failFetch = LicenseStoreError(.corruptRecord, "tenant record has no kek field")
        let third = try #require(await processor.process([plain], now: t0).first)
        #expect(third.status == KSMStatus(.internalError) && !third.isRetriable && third.ckc == nil)
    }

    @Test func invalidJobsGetSpecificReasons() async throws {
        let processor = try world.processor(store: try await memoryStore(), pool: sharedPool)
        let good = try World.job("good", device: world.deviceA, World.options(World.hdAsset))
        func json(_ fields: [String: Any]) -> [UInt8] {
            Array(try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]))
        }
        let spc64 = Data(good.job.spc).base64EncodedString()
        let base: [String: Any] = ["id": "x1", "tenant": "acme", "account": "alice", "spc": spc64, "entitlement": "e"]
        func with(_ key: String, _ value: Any?) -> [UInt8] {
            var fields = base
            fields[key] = value
            return json(fields)
        }
        let cases: [(payload: [UInt8], field: String?, fragment: String)] = [
            (Array("{not json".utf8), nil, "not valid JSON"),
            (Array("[1,2]".utf8), nil, "not an object"),
            (with("spc", nil), "spc", "missing"),
            (with("spc", "!!!not-base64!!!"), "spc", "base64"),
            (with("spc", ""), "spc", "empty"),
            (with("spc", 12), "spc", "must be a string"),
            (with("id", ""), "id", "length 0"),
            (with("id", String(repeating: "x", count: 129)), "id", "length 129"),
            (with("account", "a b"), "account", "white space"),
            (with("tenant", "t:x"), "tenant", "':'"),
            (with("deadline", -5), "deadline", "non-negative"),
            (with("deadline", 1.5), "deadline", "integer"),
            (with("deadline", "soon"), "deadline", "must be a non-negative integer, milliseconds since 1970, not string"),
            (with("priority", "urgent"), "priority", "continuity"),
            (with("entitlement", 42), "entitlement", "must be a string"),
            (Array(repeating: UInt8(ascii: " "), count: LicenseJob.maximumEncodedSize + 1), nil, "exceeds"),
            (Array(String(repeating: "[", count: 100_000).utf8), nil, "not valid JSON"),
        ]
        // The SPC with every "/" escaped as "\/" (legal JSON) is the same SPC: it takes the parser's
        // general string path instead of being read in place, and must decode to the same job.
        let escaped = Array(String(decoding: good.job.jsonBytes(), as: UTF8.self).replacingOccurrences(of: "/", with: "\\/").utf8)
        #expect(escaped != good.job.jsonBytes())
        #expect(try LicenseJob(json: escaped) == good.job)
        let payloads = cases.map(\.payload) + [good.job.jsonBytes()]
        let replies = await processor.process(encoded: payloads, now: t0)
        try #require(replies.count == payloads.count)
        for (reply, c) in zip(replies, cases) {
            #expect(reply.status == .invalidJob, "\(c.fragment)")
            #expect(reply.reason.contains(c.fragment), "expected '\(c.fragment)' in: \(reply.reason)")
            #expect(reply.rule == (c.field.map { "job:\($0)" } ?? "job"), "\(reply.reason)")
            if let field = c.field { #expect(reply.reason.contains("\"\(field)\"")) }
            #expect(reply.ckc == nil)
        }
        // Identity is carried when it could be read, so the reply can be correlated.
        #expect(replies[3].id == "x1" && replies[3].tenant == "acme" && replies[3].account == "alice")
        #expect(replies[0].id == "")
        // The valid job at the end is processed normally, in its place.
        #expect(replies.last?.status == .ok && replies.last?.id == "good")
        let opened = try CKCOpener.open(replies.last!.ckc!, session: good.session)
        #expect(opened.contentKey == world.keys[World.hdAsset]!.key)
    }

    @Test func jobAndReplyJSONRoundTrip() async throws {
        let good = try World.job("rt-1", device: world.deviceA, World.options(World.hdAsset), deadline: t0 + 5)
        var job = good.job
        job.priority = .continuity
        let decoded = try LicenseJob(json: job.jsonBytes())
        #expect(decoded == job)
        // Defaults: priority new, no deadline; unknown fields ignored.
        let minimal = try LicenseJob(json: Array(#"{"id":"m","tenant":"t","account":"a","spc":"AAAA","entitlement":"","future-field":{"x":1}}"#.utf8))
        #expect(minimal.priority == .new && minimal.deadline == nil && minimal.spc == [0, 0, 0])

        let processor = try world.processor(store: try await memoryStore(), pool: sharedPool)
        let reply = try #require(await processor.process([job], now: t0).first)
        let back = try LicenseReply(json: reply.jsonBytes())
        #expect(back == reply)
        let text = String(decoding: reply.jsonBytes(), as: UTF8.self)
        #expect(text.contains(#""status-name":"noErr""#) && text.contains(#""asset-id":"skd://acme/hd-1""#))
    }

    @Test func redisStoreGivesTheSameAnswers() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let redis = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        try await world.seed(redis)
        let processor = try world.processor(store: redis, pool: sharedPool)
        let (jobs, sessions) = try mixedBatch()
        try checkMixed(await processor.process(jobs, now: t0), jobs, sessions)

        // Leases through the Lua script: limit, refusal counts, idempotent redelivery.
        let play = { (n: UInt64) in MediaPlaybackInfo(creationDate: 1, state: .readyToPlay, sessionID: n) }
        let leased = try (0..<3).map { n in
            try World.job("r-\(n)", device: SimulatedDevice(trust: world.trustA), World.options(World.liveAsset, playback: play(UInt64(n))))
        }
        let first = await processor.process(leased.map(\.job), now: t0)
        #expect(first.map(\.status) == [.ok, .ok, .tooManyStreams])
        #expect(first[2].reason.contains("holds 2 of 2"))
        let again = await processor.process(leased.map(\.job), now: t0 + 10)
        #expect(again.map(\.leaseExpiresAt) == first.map(\.leaseExpiresAt))
        #expect(again.map(\.status) == first.map(\.status))
    }
}
