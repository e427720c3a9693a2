import FairPlay
import FairPlayDevice
import Foundation
import KSMTestSupport
import Licensing
import RedisStore
import Testing

@testable import KSMService

@Suite(.timeLimit(.minutes(1)))
struct CryptoPoolTests {
    @Test func mapKeepsOrderAndRunsOffTheCallersThread() async {
        let pool = CryptoPool(threadCount: 3, name: "pool-test")
        defer { pool.shutdown() }
        #expect(!CryptoPool.isPoolThread)
        let results = await pool.map(Array(0..<1000)) { n in (n * n, CryptoPool.isPoolThread) }
        #expect(results.map(\.0) == (0..<1000).map { $0 * $0 })
        #expect(results.allSatisfy { $0.1 }, "every item ran on a pool thread")
        #expect(await pool.map([Int]()) { $0 }.isEmpty)
        #expect(await pool.run { 42 } == 42)
    }

    @Test func concurrentBatchesDoNotMix() async {
        let pool = CryptoPool(threadCount: 2)
        defer { pool.shutdown() }
        await withTaskGroup(of: Bool.self) { group in
            for batch in 0..<20 {
                group.addTask {
                    let items = (0..<50).map { batch * 1000 + $0 }
                    return await pool.map(items) { $0 + 1 } == items.map { $0 + 1 }
                }
            }
            for await ok in group { #expect(ok) }
        }
    }

    @Test func workAfterShutdownStillCompletes() async {
        let pool = CryptoPool(threadCount: 1)
        pool.shutdown()
        pool.shutdown()
        #expect(await pool.map([1, 2, 3]) { $0 * 2 } == [2, 4, 6])
    }

    @Test("Threads of a pool that shut down are reused by the next pool; none exits, so none tears down mid-run")
    func threadsAreReusedNotExited() async throws {
        let reservoir = CryptoThreadReservoir()
        for round in 0..<30 {
            let pool = CryptoPool(threadCount: 2, name: "reuse", reservoir: reservoir)
            #expect(await pool.map(Array(0..<20)) { $0 + round } == (0..<20).map { $0 + round })
            pool.shutdown()
            // Both threads park again once they see the shutdown.
            let deadline = ContinuousClock.now + .seconds(30)
            while reservoir.parked < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            #expect(reservoir.parked == 2)
        }
        #expect(reservoir.started == 2, "30 pools in turn ran on the same two threads")
        // Two pools at once need four threads; afterwards all four are parked.
        let a = CryptoPool(threadCount: 2, name: "a", reservoir: reservoir)
        let b = CryptoPool(threadCount: 2, name: "b", reservoir: reservoir)
        let (first, second) = (await a.map([1]) { $0 }, await b.map([2]) { $0 })
        #expect(first == [1] && second == [2])
        a.shutdown()
        b.shutdown()
        #expect(reservoir.started == 4)
    }

    @Test("A task on the pool's executor runs on a crypto thread, maps a few items in place and more over every thread")
    func executorRunsTasksOnCryptoThreads() async {
        let pool = CryptoPool(threadCount: 2, name: "exec-test")
        defer { pool.shutdown() }
        let outcome = await withTaskExecutorPreference(pool.executor) { () async -> (onPool: Bool, inPlace: Bool, spread: Bool) in
            let onPool = CryptoPool.isPoolThread
            let here = pthread_self()
            let few = await pool.map(Array(0..<CryptoPool.inPlaceLimit)) { _ in pthread_equal(pthread_self(), here) != 0 }
            // Enough items that the second thread, woken for its share, takes some of them.
            let many = await pool.map(Array(0..<2_000)) { n -> (Bool, Int) in
                var x = n
                for _ in 0..<2_000 { x = x &* 31 &+ 7 }
                return (CryptoPool.isPoolThread, Int(bitPattern: UInt(pthread_self())) ^ (x & 0))
            }
            return (onPool, few.allSatisfy { $0 }, Set(many.map(\.1)).count == 2 && many.allSatisfy(\.0))
        }
        #expect(outcome.onPool, "the task ran on a crypto thread")
        #expect(outcome.inPlace, "a few items ran on the task's own thread")
        #expect(outcome.spread, "many items ran on both threads")
        #expect(!CryptoPool.isPoolThread, "the task is back on the cooperative pool after the preference ends")
    }

    @Test("The executor still runs tasks after its pool has shut down")
    func executorAfterShutdown() async {
        let pool = CryptoPool(threadCount: 1, name: "exec-down")
        pool.shutdown()
        let value = await withTaskExecutorPreference(pool.executor) { () async -> Int in
            await Task.yield()
            return await pool.map([1, 2, 3]) { $0 * 2 }.reduce(0, +)
        }
        #expect(value == 12)
    }

    @Test("A Redis round trip from a task on the crypto threads is answered in place on that thread, the same as through the connection's queue")
    func redisRoundTripInPlace() async throws {
        let redis = try await RedisServerProcess()
        defer { redis.stop() }
        var configuration = redis.configuration(poolSize: 1)
        // Other tests share the host's cores: a round trip here may take longer than the default
        // limit, which the next test checks on its own.
        configuration.inPlaceRoundTripLimit = .seconds(1)
        let client = try RedisClient(configuration: configuration)
        let pool = CryptoPool(threadCount: 2, name: "exec-redis")
        defer { pool.shutdown() }
        // From the cooperative pool: through the queue.
        _ = try await client.pipeline([RedisCommand(["SET", "k", "v0"])], durability: nil)
        let outcome = try await withTaskExecutorPreference(pool.executor) { () async throws -> (values: [String], sameThread: Bool) in
            let here = pthread_self()
            var values: [String] = []
            var sameThread = true
            for n in 1...40 {
                let replies = try await client.pipeline([RedisCommand(["SET", "k", RedisArgument("v\(n)")]), RedisCommand(["GET", "k"])], durability: nil)
                values.append(replies.last?.string ?? "missing")
                // Through the queue the task would resume on whichever crypto thread is free: the
                // other one, parked longest, most of the time.
                if pthread_equal(pthread_self(), here) == 0 { sameThread = false }
            }
            return (values, sameThread)
        }
        #expect(outcome.values == (1...40).map { "v\($0)" })
        #expect(outcome.sameThread, "every round trip stayed on the task's crypto thread")
        #expect(try await client.pipeline([RedisCommand(["GET", "k"])], durability: nil).first?.string == "v40")
    }

    @Test("A crypto thread's round trip on a connection another call holds goes through the queue, and the thread stays free meanwhile")
    func busyConnectionLeavesTheCryptoThreadFree() async throws {
        let redis = try await RedisServerProcess()
        defer { redis.stop() }
        let client = try RedisClient(configuration: redis.configuration(poolSize: 1))
        let other = try RedisClient(configuration: redis.configuration(poolSize: 1))
        let pool = CryptoPool(threadCount: 1, name: "exec-busy")
        defer { pool.shutdown() }
        _ = try await client.pipeline([RedisCommand(["SET", "k", "v"])], durability: nil)
        // The client's only connection is held by a blocking pop on an empty list until the list
        // gets an element (or 30 s pass); seen blocked from the server's side.
        async let held = client.pipeline([RedisCommand(["BLPOP", "empty", "30"])], durability: nil)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let info = try await other.pipeline([RedisCommand(["INFO", "clients"])], durability: nil).first?.string ?? ""
            if info.contains("blocked_clients:1") { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        let clock = ContinuousClock()
        // The read's first job is on the pool's one thread before the map's items: in place, it
        // would hold that thread until the pop ends, and the map could not run before it.
        let read = Task(executorPreference: pool.executor) { () async throws -> (String?, ContinuousClock.Instant) in
            let value = try await client.pipeline([RedisCommand(["GET", "k"])], durability: nil).first?.string
            return (value, clock.now)
        }
        let mapped = await pool.map(Array(0..<8)) { $0 * 2 }
        let mappedAt = clock.now
        _ = try await other.pipeline([RedisCommand(["RPUSH", "empty", "x"])], durability: nil)
        let (value, readAt) = try await read.value
        _ = try await held
        #expect(value == "v")
        #expect(mapped == (0..<8).map { $0 * 2 })
        #expect(mappedAt < readAt, "the crypto thread was free while its round trip waited for the connection")
    }

    @Test("A crypto thread's round trip on a connection whose recent round trips were slow goes through the queue, and the thread stays free meanwhile")
    func slowConnectionLeavesTheCryptoThreadFree() async throws {
        let redis = try await RedisServerProcess()
        defer { redis.stop() }
        let client = try RedisClient(configuration: redis.configuration(poolSize: 1))
        let pool = CryptoPool(threadCount: 1, name: "exec-slow")
        defer { pool.shutdown() }
        // A script that keeps the server busy for tens of milliseconds: a server across a network,
        // or one too busy to answer at once, as the connection sees it.
        let slow = RedisCommand(["EVAL", "local i = 0 while i < 3000000 do i = i + 1 end return i", "0"])
        let first = try await client.pipeline([slow], durability: nil)
        #expect(first.first?.integerValue == 3_000_000)
        let limit = RedisClientConfiguration().inPlaceRoundTripLimit
        #expect(client.recentRoundTrips.allSatisfy { $0 > limit }, "the slow round trip moved the average past the limit")
        let clock = ContinuousClock()
        // As in the busy-connection test: in place, the read would hold the pool's one thread for
        // the script's whole run, and the map could not run before it ends.
        let read = Task(executorPreference: pool.executor) { () async throws -> (Int64?, ContinuousClock.Instant) in
            let value = try await client.pipeline([slow], durability: nil).first?.integerValue
            return (value, clock.now)
        }
        // Each item's time is read on the crypto thread as it runs: the test's own task may resume
        // long after, when other tests hold the cooperative pool.
        let mapped = await pool.map(Array(0..<8)) { ($0 * 2, clock.now) }
        let mappedAt = mapped.map(\.1).max() ?? clock.now
        let (value, readAt) = try await read.value
        #expect(value == 3_000_000)
        #expect(mapped.map(\.0) == (0..<8).map { $0 * 2 })
        #expect(mappedAt < readAt, "the crypto thread was free while the slow round trip waited")
    }

    /// Opens the same SPCs with one thread and with one per core, and reports the throughput.
    /// Asserts only that both answer correctly: other builds share this machine, so timings are
    /// reported (in the test's output), not enforced.
    @Test func openingSPCsScalesWithThreads() async throws {
        let world = try World()
        let server = try world.keyServer()
        let spcs = try (0..<240).map { _ in try world.deviceA.makeSPC(World.options(World.hdAsset)).spc }
        var rates: [Int: Double] = [:]
        let cores = max(2, ProcessInfo.processInfo.activeProcessorCount)
        for threads in [1, cores] {
            let pool = CryptoPool(threadCount: threads, name: "scale-\(threads)")
            defer { pool.shutdown() }
            _ = await pool.map(Array(spcs.prefix(threads * 4))) { try? server.open($0) }  // warm up
            let start = ContinuousClock.now
            let opened = await pool.map(spcs) { (try? server.open($0)) != nil }
            let elapsed = ContinuousClock.now - start
            #expect(opened.allSatisfy { $0 })
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            rates[threads] = Double(spcs.count) / seconds
        }
        let one = rates[1]!
        let many = rates[cores]!
        print("CryptoPool SPC v2 opens: 1 thread \(Int(one))/s, \(cores) threads \(Int(many))/s, speed-up \(String(format: "%.2f", many / one))x")
    }
}

@Suite struct KeyEncryptionKeyringTests {
    @Test func wrapUnwrapAndErrors() throws {
        let ring = try KeyEncryptionKeyring([id("k16"): FairPlayCrypto.randomBytes(16)])
        var k32 = FairPlayCrypto.randomBytes(32)
        try ring.add(id: id("k32"), key: &k32)
        #expect(k32.isEmpty, "add takes the bytes")
        #expect(ring.ids == [id("k16"), id("k32")])

        let key = FairPlayCrypto.randomBytes(16)
        let iv = FairPlayCrypto.randomBytes(16)
        for kek in [id("k16"), id("k32")] {
            let wrapped = try ring.wrap(contentKey: key, iv: iv, with: kek)
            #expect(wrapped.wrappedKey.count == 24 && wrapped.keyEncryptionKeyID == kek && wrapped.iv == iv)
            #expect(try ring.unwrap(wrapped) == key)
        }
        var wrapped = try ring.wrap(contentKey: key, iv: iv, with: id("k16"))
        wrapped.wrappedKey[0] ^= 1
        #expect(throws: KeyEncryptionKeyring.KeyringError.self) { try ring.unwrap(wrapped) }
        // Naming the other KEK: the integrity check catches it.
        wrapped = try ring.wrap(contentKey: key, iv: iv, with: id("k16"))
        wrapped.keyEncryptionKeyID = id("k32")
        #expect(throws: KeyEncryptionKeyring.KeyringError.self) { try ring.unwrap(wrapped) }

        var short = [UInt8](repeating: 1, count: 24)
        #expect(throws: KeyEncryptionKeyring.KeyringError.self) { try ring.add(id: id("k24"), key: &short) }
        #expect(short.count == 24, "a refused key is left alone")
        #expect(throws: KeyEncryptionKeyring.KeyringError.self) { try ring.wrap(contentKey: [1, 2], iv: iv, with: id("k16")) }

        ring.remove(id: id("k16"))
        let error = #expect(throws: KeyEncryptionKeyring.KeyringError.self) { try ring.wrap(contentKey: key, iv: iv, with: id("k16")) }
        #expect(error?.description.contains("k16") == true)
        ring.removeAll()
        #expect(ring.ids.isEmpty)
    }

    @Test("a content key is unwrapped once per memo lifetime, and forgotten with its KEK")
    func contentKeyMemo() throws {
        let ring = try KeyEncryptionKeyring([id("k16"): FairPlayCrypto.randomBytes(16)])
        let key = FairPlayCrypto.randomBytes(16)
        let iv = FairPlayCrypto.randomBytes(16)
        let wrapped = try ring.wrap(contentKey: key, iv: iv, with: id("k16"))
        let t0 = ContinuousClock.now
        let first = try ring.contentKey(wrapped, now: t0)
        #expect(first.copy() == key)
        // Within the lifetime: the same shared bytes, no second unwrap.
        #expect(try ring.contentKey(wrapped, now: t0 + .seconds(9)) === first)
        // After it: unwrapped again (equal bytes, a new holder).
        let later = try ring.contentKey(wrapped, now: t0 + .seconds(11))
        #expect(later !== first && later.copy() == key)
        #expect(ring.rememberedContentKeys == 1)

        // Replacing the KEK forgets its keys: the old wrapped bytes no longer open.
        var other = FairPlayCrypto.randomBytes(16)
        try ring.add(id: id("k16"), key: &other)
        #expect(ring.rememberedContentKeys == 0)
        #expect(throws: KeyEncryptionKeyring.KeyringError.self) { try ring.contentKey(wrapped, now: t0 + .seconds(12)) }

        // Removing it too.
        let rewrapped = try ring.wrap(contentKey: key, iv: iv, with: id("k16"))
        _ = try ring.contentKey(rewrapped, now: t0)
        #expect(ring.rememberedContentKeys == 1)
        ring.remove(id: id("k16"))
        #expect(ring.rememberedContentKeys == 0)
        #expect(throws: KeyEncryptionKeyring.KeyringError.self) { try ring.contentKey(rewrapped, now: t0) }
    }
}

@Suite struct KSMStatusTests {
    @Test func codesNamesAndRetriability() throws {
        #expect(KSMStatus.projectCodes.map(\.rawValue) == Array((-43036 ... -43001).reversed()))
        // The policy engine's refusals carry exactly the statuses KSMStatus names.
        for refusal in PolicyRefusal.allCases {
            #expect(KSMStatus(refusal).name == refusal.statusName, "\(refusal)")
        }
        #expect(Set(KSMStatus.allKnown.map(\.name)).count == KSMStatus.allKnown.count, "names are unique")
        #expect(KSMStatus.allKnown.filter(\.isRetriable) == [.storeUnavailable, .overloaded, .rateLimited])
        #expect(KSMStatus(.integrityError).name == "integrityErr" && !KSMStatus(.integrityError).isProjectCode)
        #expect(KSMStatus.tooManyStreams.description == "tooManyStreams (-43004)")

        // Every code is documented in docs/status-codes.md.
        let doc = String(decoding: try Fixtures.project("docs/status-codes.md"), as: UTF8.self)
        for status in KSMStatus.allKnown {
            #expect(doc.contains("`\(status.rawValue)`") && doc.contains(status.name), "\(status) is not documented")
        }
        // The retriable column and the sentence above the tables agree with `isRetriable`.
        for status in KSMStatus.projectCodes {
            let row = doc.split(separator: "\n").first { $0.hasPrefix("| `\(status.rawValue)` |") }
            let column = row?.split(separator: "|").dropFirst(2).first?.trimmingCharacters(in: .whitespaces)
            #expect(column == (status.isRetriable ? "**yes**" : "no"), "\(status): retriable column \(column ?? "missing")")
        }
        let retriableNames = KSMStatus.allKnown.filter(\.isRetriable).map { "`\($0.name)`" }
        #expect(doc.contains("Only \(retriableNames.dropLast().joined(separator: ", ")) and \(retriableNames.last ?? "") are retriable"))
    }
}

@Suite(.timeLimit(.minutes(1)))
struct ProcessorThroughputTests {
    /// A whole batch through the pipeline (open, one fetch, one lease call, CKCs) with the in-memory
    /// store; reports jobs per second for a pool of 1 and of 2 threads. Reported, not enforced.
    @Test func batchThroughput() async throws {
        let world = try World()
        let store = InMemoryLicenseStore()
        try await world.seed(store)
        try await store.putTenant(
            TenantRecord(id: id("acme"), certificateHashes: [world.credentialA.certificateHash], keyEncryptionKeyID: id("kek-a"), maxConcurrentStreams: 1000))
        let jobs = try (0..<200).map { n in
            try World.job(
                "tp-\(n)", account: "acct-\(n % 50)", device: world.deviceA,
                World.options(World.hdAsset, playback: MediaPlaybackInfo(creationDate: 1, state: .readyToPlay, sessionID: UInt64(n)))
            ).job
        }
        var report: [String] = []
        for threads in [1, 2] {
            let pool = CryptoPool(threadCount: threads, name: "tp-\(threads)")
            defer { pool.shutdown() }
            let processor = try world.processor(store: store, pool: pool)
            let start = ContinuousClock.now
            let replies = await processor.process(jobs, now: t0)
            let elapsed = ContinuousClock.now - start
            #expect(replies.allSatisfy { $0.status == .ok }, "\(replies.first { $0.status != .ok }?.reason ?? "")")
            let ms = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
            report.append("\(threads) thread(s): \(jobs.count) jobs in \(Int(ms)) ms (\(Int(Double(jobs.count) / ms * 1000)) jobs/s)")
        }
        print("LicenseProcessor batch: " + report.joined(separator: "; "))
    }
}
