import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import KSMTestSupport
import Licensing
import RedisStore
import Testing

/// The advertised prefetch window in replies: `next-key` on a rotating asset's successes, placed per
/// viewer, identical on redelivery, and the prefetcher keeping the worker's schedules without a
/// round trip per job.
@Suite(.timeLimit(.minutes(1)))
struct PrefetchAdviceTests {
    let world: World
    let boundary = t0 + 300_000
    let window = PrefetchWindow(windowMilliseconds: 60_000, marginMilliseconds: 10_000)

    init() throws {
        world = try World()
    }

    func processor(store: any LicenseStore, guards: (any JobGuardStore)? = nil) throws -> LicenseProcessor {
        var processor = LicenseProcessor(
            keyServer: try world.keyServer(), store: store, keyring: world.keyring, pool: sharedPool, logger: quietLogger,
            guards: guards.map { JobGuards(store: $0) })
        let schedules = RotationScheduleCache()
        schedules.replace(with: [
            RotationSchedule(
                tenant: id("acme"), assetID: Array(World.liveAsset.utf8), nextAssetID: Array("skd://acme/live-2".utf8),
                boundaryMilliseconds: boundary)
        ])
        processor.prefetchAdvisor = PrefetchAdvisor(window: window, schedules: schedules)
        return processor
    }

    func viewerJob(_ n: Int, asset: String = World.liveAsset) throws -> LicenseJob {
        let playback = MediaPlaybackInfo(creationDate: 1, state: .readyToPlay, sessionID: UInt64(n))
        return try World.job("v-\(n)", account: "viewer-\(n)", device: SimulatedDevice(trust: world.trustA), World.options(asset, playback: playback)).job
    }

    @Test("a rotating asset's success carries next-key: the boundary and the viewer's place in the window, in the JSON and back")
    func presentOnARotatingAsset() async throws {
        let store = InMemoryLicenseStore()
        try await world.seed(store)
        let replies = await (try processor(store: store)).process(try (0..<4).map { try viewerJob($0) }, now: t0)
        for (n, reply) in replies.enumerated() {
            #expect(reply.status == .ok, "\(reply.reason)")
            let advice = try #require(reply.nextKey)
            let viewer = PrefetchWindow.ViewerIdentity(tenant: "acme", account: "viewer-\(n)", sessionID: UInt64(n))
            #expect(
                advice
                    == NextKeyAdvice(
                        boundaryMilliseconds: boundary,
                        fetchAtMilliseconds: try #require(window.fetchTime(boundaryMilliseconds: boundary, viewer: viewer, nowMilliseconds: t0))))
            #expect(advice.fetchAtMilliseconds >= boundary - 70_000 && advice.fetchAtMilliseconds < boundary - 10_000)
            let text = String(decoding: reply.jsonBytes(), as: UTF8.self)
            #expect(text.contains(#""next-key":{"boundary":\#(boundary),"fetch-at":\#(advice.fetchAtMilliseconds)}"#), "\(text)")
            #expect(try LicenseReply(json: reply.jsonBytes()).nextKey == advice)
            #expect(reply.jsonBytes() == reply.jsonValue.encoded(), "the writer and the tree agree")
        }
        #expect(Set(replies.compactMap(\.nextKey?.fetchAtMilliseconds)).count == 4, "each viewer its own time")
    }

    @Test("no next-key for an asset without a schedule, for a refusal, or once the window has closed")
    func absentOtherwise() async throws {
        let store = InMemoryLicenseStore()
        try await world.seed(store)
        let processor = try processor(store: store)
        let plain = try #require(await processor.process([try viewerJob(1, asset: World.hdAsset)], now: t0).first)
        #expect(plain.status == .ok && plain.nextKey == nil)
        #expect(!String(decoding: plain.jsonBytes(), as: UTF8.self).contains("next-key"))
        var unknown = try viewerJob(2)
        unknown.tenant = id("nobody")
        let refused = try #require(await processor.process([unknown], now: t0).first)
        #expect(refused.status != .ok && refused.nextKey == nil)
        let late = try #require(await processor.process([try viewerJob(3)], now: boundary - 5_000).first)
        #expect(late.status == .ok && late.nextKey == nil)
    }

    @Test("the same viewer gets the same time from any worker; a redelivered job gets the first reply's bytes")
    func deterministicAndRedelivered() async throws {
        let store = InMemoryLicenseStore()
        try await world.seed(store)
        let job = try viewerJob(7)
        // Two workers without stored replies: fresh CKCs, the same advice.
        let a = try #require(await (try processor(store: store)).process([job], now: t0).first)
        let b = try #require(await (try processor(store: store)).process([job], now: t0 + 20_000).first)
        #expect(a.nextKey != nil && a.nextKey == b.nextKey)
        // With stored replies: the redelivery, later and after the schedule moved, repeats the bytes.
        let guards = InMemoryJobGuardStore()
        let guarded = try processor(store: store, guards: guards)
        var fresh = try viewerJob(8)
        fresh.id = id("redelivered-8")
        let first = try #require(await guarded.process([fresh], now: t0).first)
        guarded.prefetchAdvisor?.schedules.replace(with: [
            RotationSchedule(tenant: id("acme"), assetID: Array(World.liveAsset.utf8), boundaryMilliseconds: boundary + 60_000)
        ])
        let again = try #require(await guarded.process([fresh], now: t0 + 30_000).first)
        #expect(first.nextKey != nil && again.isDuplicate)
        #expect(again.jsonBytes() == first.jsonBytes())
    }

    @Test("a check-in on a rotating asset is answered without next-key: it ends keys, it fetches none")
    func checkInIsNotAdvised() async throws {
        let store = InMemoryLicenseStore()
        try await world.seed(store)
        var options = World.options(World.liveAsset, playback: MediaPlaybackInfo(creationDate: 1, state: .readyToPlay, sessionID: 11))
        options.sync = .v2(
            SyncV2(serverChallenge: 1, flags: [.report], titleID: [UInt8](repeating: 2, count: 16), durationToExpiry: 60, invalidatedStreamIDs: []))
        var job = try World.job("check-in-11", account: "viewer-11", device: SimulatedDevice(trust: world.trustA), options).job
        job.checkIn = true
        let reply = try #require(await (try processor(store: store)).process([job], now: t0).first)
        #expect(reply.status == .ok && reply.ckc == nil, "\(reply.reason)")
        #expect(reply.nextKey == nil)
    }

    @Test("a job asking for the next key period itself gets no advice for that boundary")
    func nextPeriodIsNotAdvised() async throws {
        let store = InMemoryLicenseStore()
        try await world.seed(store)
        let wrapped = try world.keyring.wrap(contentKey: FairPlayCrypto.randomBytes(16), iv: FairPlayCrypto.randomBytes(16), with: id("kek-a"))
        try await store.putContentKey(wrapped, tenant: id("acme"), assetID: Array(World.liveAsset.utf8), keyPeriod: id("p2"))
        var processor = try processor(store: store)
        let schedules = RotationScheduleCache()
        schedules.replace(with: [
            RotationSchedule(
                tenant: id("acme"), assetID: Array(World.liveAsset.utf8), currentPeriod: id("p1"), nextPeriod: id("p2"),
                boundaryMilliseconds: boundary)
        ])
        processor.prefetchAdvisor = PrefetchAdvisor(window: window, schedules: schedules)
        var next = try viewerJob(9)
        next.keyPeriod = id("p2")
        let reply = try #require(await processor.process([next], now: t0).first)
        #expect(reply.status == .ok && reply.nextKey == nil, "\(reply.reason)")
    }

    @Test("each prefetch pass keeps the schedules of the advice horizon, and warms only the keys due within the lead")
    func prefetcherKeepsSchedules() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let redis = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        let wall = LicenseProcessor.currentTimeMilliseconds()
        let soon = RotationSchedule(
            tenant: id("acme"), assetID: Array("skd://acme/a".utf8), nextAssetID: Array("skd://acme/a2".utf8), boundaryMilliseconds: wall + 20_000)
        let later = RotationSchedule(
            tenant: id("acme"), assetID: Array("skd://acme/b".utf8), nextAssetID: Array("skd://acme/b2".utf8), boundaryMilliseconds: wall + 80_000)
        let beyond = RotationSchedule(tenant: id("acme"), assetID: Array("skd://acme/c".utf8), boundaryMilliseconds: wall + 500_000)
        for schedule in [soon, later, beyond] { try await redis.putRotation(schedule) }
        let counting = ScriptedStore(redis)
        let cache = CachingLicenseStore(counting, timeToLive: .seconds(2))
        var prefetcher = RotationPrefetcher(schedules: redis, cache: cache, logger: quietLogger)
        let schedules = RotationScheduleCache()
        prefetcher.adviceSchedules = schedules
        prefetcher.adviceHorizon = .seconds(100)
        _ = try await prefetcher.pass(now: wall)
        #expect(Set(schedules.snapshot.keys.map { String(decoding: $0.assetID, as: UTF8.self) }) == ["skd://acme/a", "skd://acme/b"])
        #expect(counting.fetchCalls == 1 && cache.statistics.prefetched == 1, "only the schedule within the 30 s lead is warmed")
        // A removed schedule leaves the worker's copy at the next pass.
        try await redis.removeRotation(tenant: id("acme"), assetID: later.assetID)
        _ = try await prefetcher.pass(now: wall + 1_000)
        #expect(schedules.snapshot.count == 1)
    }
}
