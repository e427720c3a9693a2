import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import KSMTestSupport
import Licensing
import RedisStore
import Testing

/// Stored replies (byte-identical duplicates), per-account rate limits and the SPC anti-replay
/// window, in memory and through Redis's scripts.
@Suite(.timeLimit(.minutes(1)))
struct JobGuardTests {
    let world: World

    init() throws {
        world = try World()
    }

    func processor(store: any LicenseStore, guards: any JobGuardStore) throws -> LicenseProcessor {
        LicenseProcessor(
            keyServer: try world.keyServer(), store: store, keyring: world.keyring, pool: sharedPool, logger: quietLogger,
            guards: JobGuards(store: guards))
    }

    /// Runs the same checks against any guard store (memory or Redis).
    func checkGuards(store: any LicenseStore, guards: any JobGuardStore, fetches: () -> Int) async throws {
        let processor = try processor(store: store, guards: guards)
        let hd = try World.job("dup-1", device: world.deviceA, World.options(World.hdAsset))
        let first = try #require(await processor.process([hd.job], now: t0).first)
        #expect(first.status == .ok && !first.isDuplicate, "\(first.reason)")
        let before = fetches()

        // Redelivered: the stored bytes, marked, and no fetch (the SPC is not even opened).
        let again = try #require(await processor.process([hd.job], now: t0 + 5_000).first)
        #expect(again.isDuplicate)
        #expect(again.jsonBytes() == first.jsonBytes(), "a duplicate must be byte-identical")
        #expect(again.ckc == first.ckc && again.status == .ok)
        #expect(fetches() == before, "a duplicate costs no fetch")
        #expect(try CKCOpener.open(again.ckc!, session: hd.session).contentKey == world.keys[World.hdAsset]!.key)

        // On its first delivery (the worker knows no earlier owner saw it) a job skips the lookup and
        // is worked out again; storing its reply still hands back the first bytes.
        let beforeFirst = fetches()
        let firstDelivery = try #require(await processor.process([hd.job], now: t0 + 6_000, firstDeliveries: [true]).first)
        #expect(fetches() > beforeFirst, "a first delivery is not looked up, so it is processed")
        #expect(firstDelivery.isDuplicate && firstDelivery.jsonBytes() == first.jsonBytes())

        // A duplicate is answered even past its deadline: the first answer stands.
        var late = hd.job
        late.deadline = t0
        #expect(try #require(await processor.process([late], now: t0 + 10_000).first).jsonBytes() == first.jsonBytes())

        // The same job ID with another device's SPC (or another field that shapes the answer) is not
        // a redelivery: jobIdReused, final, no CKC, whether the stored answer is looked up first or
        // only found when this answer is stored (a first delivery); the first answer stays stored.
        let otherDevice = try World.job("dup-1", device: world.deviceA, World.options(World.hdAsset))
        var download = hd.job
        download.persistent = true
        for (reused, firstDelivery) in [(otherDevice.job, false), (otherDevice.job, true), (download, false)] {
            let reply = try #require(await processor.process([reused], now: t0 + 11_000, firstDeliveries: [firstDelivery]).first)
            #expect(
                reply.status == .jobIdReused && reply.rule == "job:id-reused" && reply.ckc == nil && !reply.isRetriable && !reply.isDuplicate,
                "\(reply.status) \(reply.reason)")
            #expect(reply.reason.contains("dup-1"))
        }
        #expect(try #require(await processor.process([hd.job], now: t0 + 12_000).first).jsonBytes() == first.jsonBytes())

        // Rate limit: acme allows 3 jobs per account per window; bob is counted apart.
        try await guards.putGuardSettings(GuardSettings(rateLimit: 3), tenant: id("acme"))
        let window = t0 + 3_600_000  // a fresh window
        let flood = try (0..<5).map { n in try World.job("flood-\(n)", device: world.deviceA, World.options(World.hdAsset)).job }
        let bob = try World.job("bob-1", account: "bob", device: world.deviceA, World.options(World.hdAsset)).job
        let replies = await processor.process(flood + [bob], now: window + 250)
        #expect(replies.map(\.status) == [.ok, .ok, .ok, .rateLimited, .rateLimited, .ok], "\(replies.map(\.reason))")
        #expect(replies[3].isRetriable && replies[3].retryAfterMilliseconds == 750 && replies[3].rule == "rate:limited" && replies[3].ckc == nil)
        // Retriable answers are not stored: the same job in the next window is answered afresh.
        let retried = try #require(await processor.process([flood[3]], now: window + 1_000).first)
        #expect(retried.status == .ok && !retried.isDuplicate)

        // Anti-replay: the same SPC under another job ID within the window is refused...
        try await guards.putGuardSettings(GuardSettings(replayWindowMilliseconds: 60_000), tenant: id("acme"))
        let original = try World.job("orig-1", device: world.deviceA, World.options(World.hdAsset))
        var replay = original.job
        replay.id = id("replay-1")
        let pair = await processor.process([original.job], now: window + 2_000) + (await processor.process([replay], now: window + 2_001))
        #expect(pair.map(\.status) == [.ok, .replayedSPC], "\(pair.map(\.reason))")
        #expect(pair[1].rule == "replay:spc" && !pair[1].isRetriable && pair[1].ckc == nil)
        // ... while the original job redelivered is not a replay: it gets its stored reply.
        let redelivered = try #require(await processor.process([original.job], now: window + 3_000).first)
        #expect(redelivered.isDuplicate && redelivered.jsonBytes() == pair[0].jsonBytes())
        // A claim by the same job ID (its reply lost, say) is not a replay either.
        let claim = SPCClaim(tenant: id("acme"), jobID: id("orig-1"), transactionID: 1, digest: [1, 2], windowMilliseconds: 60_000)
        #expect(try await guards.claim([claim, claim]) == [true, true])
        var other = claim
        other.jobID = id("someone-else")
        #expect(try await guards.claim([other]) == [false])

        // Two workers answering the same job: the second store returns the first's bytes.
        let stored = StoredReply(
            tenant: id("acme"), account: id("alice"), jobID: id("race-1"),
            answer: StoredAnswer(bytes: [1, 2, 3], requestDigest: [UInt8](repeating: 9, count: 32)), ttlMilliseconds: 60_000)
        var second = stored
        second.answer.bytes = [4, 5, 6]
        #expect(try await guards.storeReplies([stored]) == [nil])
        #expect(try await guards.storeReplies([second]) == [StoredAnswer(bytes: [1, 2, 3], requestDigest: [UInt8](repeating: 9, count: 32))])
    }

    @Test func inMemoryGuards() async throws {
        let memory = InMemoryLicenseStore()
        try await world.seed(memory)
        let store = ScriptedStore(memory)
        try await checkGuards(store: store, guards: InMemoryJobGuardStore(), fetches: { store.fetchCalls })
    }

    @Test func redisGuards() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let redis = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        try await world.seed(redis)
        let store = ScriptedStore(redis)
        try await checkGuards(store: store, guards: redis, fetches: { store.fetchCalls })
        // Keys live under the account's hash tag; the reply expires with its TTL.
        let client = try RedisClient(configuration: server.configuration())
        let ttl = try await client.send(["PTTL", "fps:{t:acme:a:alice}:reply:dup-1"]).integerValue ?? -2
        #expect(ttl > 0 && ttl <= 15 * 60 * 1000)
    }

    @Test func guardsWithoutSettingsChangeNothingAndDuplicatesAreMarkedOnTheWire() async throws {
        let memory = InMemoryLicenseStore()
        try await world.seed(memory)
        let processor = try processor(store: memory, guards: InMemoryJobGuardStore())
        let jobs = try (0..<20).map { n in try World.job("many-\(n)", device: world.deviceA, World.options(World.hdAsset)).job }
        let replies = await processor.process(jobs, now: t0)
        #expect(replies.allSatisfy { $0.status == .ok && !$0.isDuplicate })
        // Invalid jobs are answered without the guards (no ID to key a reply by, or deterministic anyway).
        let invalid = await processor.process(encoded: [Array("{}".utf8)], now: t0)
        #expect(invalid.first?.status == .invalidJob)
    }
}

/// The settings cache that spares tenants without a rate limit the counter script.
@Suite(.timeLimit(.minutes(1)))
struct GuardSettingsCacheTests {
    @Test("a tenant is rate-limited unless its fresh settings say otherwise")
    func freshnessDecides() {
        let cache = GuardSettingsCache(timeToLive: .seconds(2))
        let start = ContinuousClock.now
        let (acme, beta) = (id("acme"), id("beta"))
        #expect(cache.mayRateLimit(acme, now: start), "unknown: count")
        cache.remember([acme: .off, beta: GuardSettings(rateLimit: 5)], now: start)
        #expect(!cache.mayRateLimit(acme, now: start + .seconds(1)))
        #expect(cache.mayRateLimit(beta, now: start + .seconds(1)))
        #expect(cache.mayRateLimit(acme, now: start + .seconds(3)), "stale: count again")
    }

    @Test("tenants without a rate limit leave no counters in Redis; a limit set later applies in the very next batch")
    func noCountersWithoutALimitAndNewLimitsApplyAtOnce() async throws {
        let world = try World()
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let redis = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        try await world.seed(redis)
        // Times that no stall of a loaded CI host can outlast: the settings cache stays fresh (a stale
        // one would count the second batch) and the Redis counters, kept twice the window on the real
        // clock, stay until read. The processor's `now` still moves on the test's own clock.
        let window: Int64 = 600_000
        let guards = JobGuards(store: redis, rateWindowMilliseconds: window, settingsCache: GuardSettingsCache(timeToLive: .seconds(600)))
        let processor = LicenseProcessor(
            keyServer: try world.keyServer(), store: redis, keyring: world.keyring, pool: sharedPool, logger: quietLogger,
            guards: guards)
        let client = try RedisClient(configuration: server.configuration())
        func count(at now: Int64) async throws -> Int64? {
            try await client.send(["GET", RedisArgument("fps:{t:acme:a:alice}:rate:\(now / window)")]).string.flatMap { Int64($0) }
        }
        let warm = try (0..<3).map { n in try World.job("warm-\(n)", device: world.deviceA, World.options(World.hdAsset)).job }
        // The first batch does not know acme's settings yet: it counts.
        #expect(await processor.process([warm[0]], now: t0).map(\.status) == [.ok])
        #expect(try await count(at: t0) == 1)
        // Now known to have no limit: nothing more is counted in the same window.
        #expect(await processor.process(Array(warm[1...]), now: t0 + 1).map(\.status) == [.ok, .ok])
        #expect(try await count(at: t0) == 1)

        // An operator sets a limit of 1: the next batch is counted and limited at once.
        try await redis.putGuardSettings(GuardSettings(rateLimit: 1), tenant: id("acme"))
        let flood = try (0..<3).map { n in try World.job("after-\(n)", device: world.deviceA, World.options(World.hdAsset)).job }
        let later = t0 + 6 * window  // a fresh window
        #expect(await processor.process(flood, now: later).map(\.status) == [.ok, .rateLimited, .rateLimited])
        #expect(try await count(at: later) == 3)
    }
}

/// The worker retries a batch after a store outage; its jobs count toward the rate limit once.
@Suite(.timeLimit(.minutes(1)))
struct RateCountLedgerTests {
    @Test("a job retried after a store outage is counted once, and one never counted is counted on retry")
    func retriesCountOnce() async throws {
        let world = try World()
        let memory = InMemoryLicenseStore()
        try await world.seed(memory)
        let store = ScriptedStore(memory)
        let guardStore = InMemoryJobGuardStore()
        try await guardStore.putGuardSettings(GuardSettings(rateLimit: 10), tenant: id("acme"))
        let processor = LicenseProcessor(
            keyServer: try world.keyServer(), store: store, keyring: world.keyring, pool: sharedPool, logger: quietLogger,
            guards: JobGuards(store: guardStore))
        let jobs = try (0..<3).map { n in try World.job("retry-\(n)", device: world.deviceA, World.options(World.hdAsset)).job }
        let ledger = RateCountLedger()

        // Admitted and counted, then the fetch fails: retriable.
        store.failFetch = LicenseStoreError(.unavailable, "redis down", isRetriable: true)
        let first = await processor.process(jobs, now: t0, ledger: ledger)
        #expect(first.allSatisfy { $0.status == .storeUnavailable })
        #expect(jobs.allSatisfy { ledger.contains($0.id) })

        // The worker's retry with the same ledger: answered, not counted again.
        store.failFetch = nil
        let second = await processor.process(jobs, now: t0 + 100, ledger: ledger)
        #expect(second.allSatisfy { $0.status == .ok }, "\(second.map(\.reason))")
        let probe = try await guardStore.admit(
            [AdmissionRequest(tenant: id("acme"), account: id("alice"), jobID: id("probe"))],
            nowMilliseconds: t0 + 200, rateWindowMilliseconds: 1000)
        #expect(probe.admissions == [.counted(4)], "3 jobs once each, then the probe")

        // Without the ledger (a new batch, a redelivery) the same jobs would be counted again: the
        // ledger is per batch, not a dedup of the rate limit itself.
        #expect(!RateCountLedger().contains(jobs[0].id))
    }
}
