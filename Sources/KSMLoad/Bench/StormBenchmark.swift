import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import Kafka
import Licensing
import Logging
import Synchronization

/// The key-rotation storm: viewers already playing all ask for the next key period within
/// one second while new viewers join, through Kafka and Redis to real workers. Measures drain time
/// against the ideal (jobs / in-process CKC rate on the same cores, same run), latency per priority
/// class, and checks every reply: each job must end with exactly one CKC that opens to its key.
///
/// A shed job (`overloaded`) or a fail-closed one (`storeUnavailable`) is sent again after its
/// `retry-after-ms`, as a client would; its latency runs from the first send to the final CKC.
package struct StormBenchmark: Sendable {
    package struct Configuration: Sendable {
        package var brokers: String
        /// Viewers already playing; each asks for the next key period (priority continuity, playback
        /// state 3: a lease renewal).
        package var viewers = 20_000
        /// Viewers pressing play during the storm (priority new, playback state 1).
        package var joiners = 2_000
        /// The storm is sent spread over this window.
        package var window: Duration = .seconds(1)
        /// Give up waiting for replies after this long.
        package var timeout: Duration = .seconds(180)
        package var requestsTopic = "fps.license.requests"
        package var repliesTopic = "fps.license.replies"
        /// Send each job to its class's topic (`<requestsTopic>.continuity`, `.new`), as an edge does
        /// for workers with `--class-topics`; false: everything to the requests topic.
        package var classTopics = false
        /// Make each rotating viewer's current-key SPC too (a window scenario will run).
        package var prepareAdvice = false
        /// Players follow the advertised window: each rotating viewer first asks for its current key,
        /// then for the next one at its reply's `next-key.fetch-at`, at priority prefetch; false:
        /// everyone within ``window``.
        package var followWindow = false
        /// The rotation boundary, ms since 1970: when the next key period starts (a window run; the
        /// caller puts the schedules). Zero: the end of the storm's ``window`` stands for it.
        package var boundaryMilliseconds: Int64 = 0

        package init(brokers: String) { self.brokers = brokers }
    }

    /// One prepared request: the SPC and what the device needs to check the answer.
    struct Prepared: Sendable {
        var spc: [UInt8]
        var session: DeviceSession
        var hu: [UInt8]
        var sessionID: UInt64
        var asset: String
        var priority: LicenseJob.Priority
        /// The viewer's request for the key it plays now (the period before ``asset``), whose reply
        /// advertises when to ask for ``asset``; nil unless ``Configuration/prepareAdvice``.
        var adviceSPC: [UInt8]?
    }

    /// Topics may change between runs (each run uses its own, so runs never see each other's jobs).
    package var configuration: Configuration
    package let catalog: DemoCatalog
    let prepared: [Prepared]
    let logger: Logger

    /// Makes every SPC up front (on `pool`), so no device-side RSA runs during a measured storm.
    package init(configuration: Configuration, catalog: DemoCatalog, trust: DeviceTrust, pool: CryptoPool, logger: Logger) async throws {
        self.configuration = configuration
        self.catalog = catalog
        self.logger = logger
        let total = configuration.viewers + configuration.joiners
        let viewers = configuration.viewers
        let advice = configuration.prepareAdvice
        prepared = await pool.map(Array(0..<total)) { index -> Prepared? in
            let device = SimulatedDevice(trust: trust)
            let continuity = index < viewers
            let asset = catalog.assetID(stream: index % max(catalog.streams, 1), period: continuity ? 1 % max(catalog.periods, 1) : 0)
            var options = SPCOptions()
            options.assetID = Array(asset.utf8)
            let sessionID = UInt64(index + 1)
            options.playback = MediaPlaybackInfo(creationDate: 1_790_000_000, state: continuity ? .leaseRenewal : .readyToPlay, sessionID: sessionID)
            guard let (spc, session) = try? device.makeSPC(options) else { return nil }
            var adviceSPC: [UInt8]?
            if advice, continuity {
                // The same device and session, the current period: a renewal of the same lease slot.
                options.assetID = Array(catalog.assetID(stream: index % max(catalog.streams, 1), period: 0).utf8)
                guard let (current, _) = try? device.makeSPC(options) else { return nil }
                adviceSPC = current
            }
            return Prepared(
                spc: spc, session: session, hu: device.hu, sessionID: sessionID, asset: asset, priority: continuity ? .continuity : .new,
                adviceSPC: adviceSPC)
        }.compactMap { $0 }
        guard prepared.count == total else { throw StormError("could not make every SPC (\(prepared.count) of \(total))") }
    }

    package struct StormError: Error, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }

    /// The accounts of a run: one per viewer, distinct per run so runs never share lease slots.
    func account(run: String, index: Int) -> String { "storm-\(run)-\(index)" }

    /// Gives every playing viewer of `run` its lease slot before the storm (they are already watching).
    package func seedLeases(run: String, store: any LicenseStore) async throws {
        let tenant = try StoreIdentifier(catalog.tenant)
        let now = LicenseProcessor.currentTimeMilliseconds()
        for chunk in stride(from: 0, to: configuration.viewers, by: 1_000) {
            let requests = try (chunk..<min(chunk + 1_000, configuration.viewers)).map { index in
                let p = prepared[index]
                return LeaseRequest(
                    requestID: try StoreIdentifier("seed-\(run)-\(index)"), tenant: tenant, account: try StoreIdentifier(account(run: run, index: index)),
                    deviceID: p.hu, sessionID: p.sessionID, maxConcurrentStreams: catalog.maxConcurrentStreams,
                    leaseDurationSeconds: catalog.leaseDurationSeconds, nowMilliseconds: now)
            }
            _ = try await store.acquireLeases(requests)
        }
    }

    /// The in-process rate on this machine: SPC to CKC for the storm's own SPCs (all of them unless
    /// `sample` is given) on `pool`, no Kafka, no Redis; and this process's CPU time per CKC meanwhile.
    /// The whole set takes several seconds, as the storm does: a sample of a fraction of a second
    /// varied by a third between runs on a shared host (docs/performance.md).
    package func inProcessRate(server: KeyServerModule, pool: CryptoPool, sample: Int? = nil) async -> Baseline {
        let spcs = prepared.prefix(sample ?? prepared.count).map(\.spc)
        let baseline = InProcessBaseline(server: server, pool: pool, spcs: spcs)
        await baseline.warmUp()
        let cpuBefore = CPUAccount.sample()
        let hostBefore = HostTime.sample()
        let rate = await baseline.measure()
        let spent = CPUAccount.sample() - cpuBefore
        return Baseline(
            ckcPerSecond: rate, cpuMicrosecondsPerJob: spent.microsecondsPerJob(spcs.count)["total"] ?? 0,
            hostSteal: HostTime.sample().stealFraction(since: hostBefore))
    }

    /// One in-process baseline measurement (``inProcessRate(server:pool:sample:)``).
    package struct Baseline: Sendable {
        package var ckcPerSecond: Double
        /// This process's CPU time per CKC while it ran.
        package var cpuMicrosecondsPerJob: Double
        /// The share of the CPUs' time the hypervisor took meanwhile (``HostTime``).
        package var hostSteal: Double?
    }

    /// What the client saw of one job.
    struct JobState {
        var firstSent: ContinuousClock.Instant?
        var answeredAt: ContinuousClock.Instant?
        var answer: [UInt8]?
        var attempts = 0
        var finalReplies = 0
    }

    final class Tracker: Sendable {
        struct State {
            var jobs: [JobState]
            var retries: [(index: Int, due: ContinuousClock.Instant)] = []
            var retriable = 0
            var unknownReplies = 0
            /// Jobs with a final answer: the client's loop asks every 10 ms whether it is done, and a
            /// scan of every job each time would charge the fleet for the client's bookkeeping.
            var answered = 0
        }
        let state: Mutex<State>
        init(count: Int) { state = Mutex(State(jobs: Array(repeating: JobState(), count: count))) }
    }

    /// Sends the storm for `run` (workers must be running and own the partitions) and waits for every
    /// job's final answer.
    /// - Parameter processes: other processes to charge CPU time to (workers, redis-server), by
    ///   component name; this process (client and mock broker) is always counted.
    package func run(_ run: String, label: String, processes: [String: [Int32]] = [:]) async throws -> StormReport {
        let tenant = catalog.tenant
        let followWindow = configuration.followWindow
        // Following the window, a rotating viewer's next key is a prefetch (the schedule's contract).
        func priority(_ p: Prepared) -> LicenseJob.Priority { followWindow && p.priority == .continuity ? .prefetch : p.priority }
        let bodies: [[UInt8]] = try prepared.indices.map { index in
            let p = prepared[index]
            let job = LicenseJob(
                id: try StoreIdentifier("\(run)-\(index)"), tenant: try StoreIdentifier(tenant),
                account: try StoreIdentifier(account(run: run, index: index)), spc: p.spc,
                deadline: nil, priority: priority(p))
            return job.jsonBytes()
        }
        let advisedViewers = followWindow ? prepared.indices.filter { prepared[$0].adviceSPC != nil } : []
        let adviceBodies: [Int: [UInt8]] = try Dictionary(
            uniqueKeysWithValues: advisedViewers.map { index in
                let job = LicenseJob(
                    id: try StoreIdentifier("\(run)a-\(index)"), tenant: try StoreIdentifier(tenant),
                    account: try StoreIdentifier(account(run: run, index: index)), spc: prepared[index].adviceSPC ?? [],
                    deadline: nil, priority: .continuity)
                return (index, job.jsonBytes())
            })
        let tracker = Tracker(count: prepared.count)
        let adviceTracker = Tracker(count: prepared.count)

        var producerConfig = KafkaProducer.Configuration(bootstrapServers: configuration.brokers)
        producerConfig.properties = ["linger.ms": "5"]
        let producer = try KafkaProducer(configuration: producerConfig, logger: logger)
        let requestsTopic = configuration.requestsTopic
        let classTopics = configuration.classTopics
        let topics = prepared.map { p in classTopics ? RequestTopics.topic(for: priority(p), requestsTopic: requestsTopic) : requestsTopic }
        let adviceTopic = classTopics ? RequestTopics.topic(for: .continuity, requestsTopic: requestsTopic) : requestsTopic
        await producer.warmUp(topics: Array(Set(topics + (advisedViewers.isEmpty ? [] : [adviceTopic]))))
        var consumerConfig = KafkaConsumer.Configuration(
            bootstrapServers: configuration.brokers, groupID: "storm-client-\(run)", topics: [configuration.repliesTopic])
        consumerConfig.properties = ["auto.offset.reset": "earliest", "fetch.wait.max.ms": "10", "fetch.error.backoff.ms": "50"]
        consumerConfig.eventBufferSize = max(consumerConfig.eventBufferSize, 2 * (prepared.count + advisedViewers.count))
        let consumer = try KafkaConsumer(configuration: consumerConfig, logger: logger)
        let assigned = AsyncStream<Void>.makeStream()
        let prefix = Array("\(run)-".utf8)
        let advicePrefix = Array("\(run)a-".utf8)
        // A child task: it ends when the consumer closes, and the run waits for it.
        async let reading: Void = {
            var announced = false
            for await events in consumer.eventBatches(limit: 1_024) {
                let now = ContinuousClock.now
                for event in events {
                    switch event {
                    case .assigned:
                        if !announced {
                            announced = true
                            assigned.continuation.yield()
                        }
                    case .message(let m):
                        if let id = m.header("correlation-id"), id.starts(with: advicePrefix) {
                            Self.receive(m, prefix: advicePrefix, at: now, tracker: adviceTracker)
                        } else {
                            Self.receive(m, prefix: prefix, at: now, tracker: tracker)
                        }
                    default: break
                    }
                }
            }
        }()
        for await _ in assigned.stream { break }

        func record(_ index: Int) -> KafkaProducer.Record {
            let account = Array(self.account(run: run, index: index).utf8)
            return KafkaProducer.Record(
                topic: topics[index], key: account, value: bodies[index],
                headers: [("correlation-id", Array("\(run)-\(index)".utf8))])
        }
        func adviceRecord(_ index: Int) -> KafkaProducer.Record {
            KafkaProducer.Record(
                topic: adviceTopic, key: Array(self.account(run: run, index: index).utf8), value: adviceBodies[index] ?? [],
                headers: [("correlation-id", Array("\(run)a-\(index)".utf8))])
        }

        // Before a window run: every rotating viewer asks for the key it plays now, and hears from
        // the reply when to ask for the next one (not measured: the previous period's traffic).
        var fetchAt: [Int: ContinuousClock.Instant] = [:]
        var unadvised = 0
        let wallAtMark = LicenseProcessor.currentTimeMilliseconds()
        let instantAtMark = ContinuousClock.now
        func instant(wallMilliseconds: Int64) -> ContinuousClock.Instant { instantAtMark + .milliseconds(wallMilliseconds - wallAtMark) }
        if !advisedViewers.isEmpty {
            let now = ContinuousClock.now
            adviceTracker.state.withLock { s in
                for index in advisedViewers {
                    s.jobs[index].firstSent = now
                    s.jobs[index].attempts = 1
                }
            }
            _ = await producer.send(advisedViewers.map(adviceRecord))
            await Self.awaitAnswers(tracker: adviceTracker, expected: advisedViewers.count, until: .now + configuration.timeout) { due in
                _ = await producer.send(due.map(adviceRecord))
            }
            let answers = adviceTracker.state.withLock { s in advisedViewers.map { s.jobs[$0].answer } }
            for (index, answer) in zip(advisedViewers, answers) {
                if let bytes = answer, let reply = try? LicenseReply(json: bytes), let advice = reply.nextKey {
                    fetchAt[index] = instant(wallMilliseconds: advice.fetchAtMilliseconds)
                } else {
                    unadvised += 1
                }
            }
        }

        // The storm. Unsmoothed: continuity and new jobs interleaved, spread evenly over the window in
        // 20 ticks. Following the window: each rotating viewer at its advertised time (one without
        // advice at the window's start), the joiners over the first second of the window.
        let order = Self.interleave(viewers: configuration.viewers, joiners: configuration.joiners)
        let ticks = 20
        var schedule: [(due: ContinuousClock.Instant, indices: [Int])] = []
        let start: ContinuousClock.Instant
        if followWindow {
            let opens = fetchAt.values.min() ?? .now
            start = opens
            var timed = prepared.indices.map { index -> (ContinuousClock.Instant, Int) in
                if let at = fetchAt[index] { return (at, index) }
                if index >= configuration.viewers {
                    let joiner = index - configuration.viewers
                    return (opens + .seconds(Double(joiner) / Double(max(configuration.joiners, 1))), index)
                }
                return (opens, index)
            }
            timed.sort { $0.0 < $1.0 }
            // 20 ms ticks: each tick sends what falls due within it.
            var cursor = 0
            while cursor < timed.count {
                let tickStart = timed[cursor].0
                var indices: [Int] = []
                while cursor < timed.count, timed[cursor].0 < tickStart + .milliseconds(20) {
                    indices.append(timed[cursor].1)
                    cursor += 1
                }
                schedule.append((tickStart, indices))
            }
        } else {
            start = .now
            for tick in 0..<ticks {
                schedule.append(
                    (
                        start + configuration.window * (Double(tick) / Double(ticks)),
                        Array(order[(order.count * tick / ticks)..<(order.count * (tick + 1) / ticks)])
                    ))
            }
        }
        // Counted from the first send: a window run waits for its window to open, and that idle
        // wait is not the storm's work.
        if start > .now { try? await Task.sleep(until: start) }
        let cpuAtStart = CPUAccount.sample(processes: processes, threadSplit: ["workers"])
        let hostAtStart = HostTime.sample()
        // Each tick's send waits for its delivery reports in a task of its own, so a slow
        // acknowledgement never delays the ticks after it (the window's many small ticks).
        await withTaskGroup(of: Void.self) { group in
            for (due, slice) in schedule {
                if due > .now { try? await Task.sleep(until: due) }
                let now = ContinuousClock.now
                tracker.state.withLock { s in
                    for index in slice {
                        s.jobs[index].firstSent = now
                        s.jobs[index].attempts = 1
                    }
                }
                let records = slice.map(record)
                group.addTask { _ = await producer.send(records) }
            }
        }

        // Wait for every final answer, re-sending what a retry-after asked for.
        await Self.awaitAnswers(tracker: tracker, expected: prepared.count, until: .now + configuration.timeout) { due in
            _ = await producer.send(due.map(record))
        }
        let measuredEnd = ContinuousClock.now
        let cpuSpent = CPUAccount.sample(processes: processes, threadSplit: ["workers"]) - cpuAtStart
        let hostSteal = HostTime.sample().stealFraction(since: hostAtStart)
        // Late duplicates would show up within a moment; give them one.
        try? await Task.sleep(for: .milliseconds(500))
        await consumer.close()
        await reading
        await producer.close()

        let state = tracker.state.withLock { $0 }
        var report = StormReport(label: label, start: start, end: measuredEnd, prepared: prepared, catalog: catalog, state: state)
        report.cpuMicrosecondsPerJob = cpuSpent.microsecondsPerJob(prepared.count)
        report.hostSteal = hostSteal
        report.cpuUtilization =
            (cpuSpent.seconds.values.reduce(0, +) / ((measuredEnd - start).seconds * Double(ProcessInfo.processInfo.activeProcessorCount)) * 100).rounded()
            / 100
        // The key period starts at the boundary; an unsmoothed storm is read as sent within the last
        // second before it (the end of its send window), the most generous reading of today's players.
        let boundary =
            followWindow && configuration.boundaryMilliseconds > 0
            ? instant(wallMilliseconds: configuration.boundaryMilliseconds) : start + configuration.window
        report.recordBoundary(boundary, start: start, prepared: prepared, state: state)
        report.followedWindow = followWindow
        if followWindow { report.unadvisedViewers = unadvised }
        return report
    }

    /// Waits until `expected` jobs of `tracker` have a final answer (or `deadline`), re-sending through
    /// `send` the jobs a retry-after hint asked to send again.
    static func awaitAnswers(
        tracker: Tracker, expected: Int, until deadline: ContinuousClock.Instant,
        send: ([Int]) async -> Void
    ) async {
        while ContinuousClock.now < deadline {
            let (done, due): (Bool, [Int]) = tracker.state.withLock { s in
                let now = ContinuousClock.now
                let ready = s.retries.filter { $0.due <= now }.map(\.index)
                s.retries.removeAll { $0.due <= now }
                for index in ready { s.jobs[index].attempts += 1 }
                return (s.answered >= expected && s.retries.isEmpty, ready)
            }
            if done { break }
            if !due.isEmpty { await send(due) }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Continuity and new jobs mixed evenly (the joiners spread through the viewers' burst).
    static func interleave(viewers: Int, joiners: Int) -> [Int] {
        var order: [Int] = []
        order.reserveCapacity(viewers + joiners)
        var v = 0
        var j = 0
        while v < viewers || j < joiners {
            // Keep the joiners' share of the sent jobs equal to their share of the total at every point.
            if j < joiners, v >= viewers || j * viewers <= v * joiners {
                order.append(viewers + j)
                j += 1
            } else {
                order.append(v)
                v += 1
            }
        }
        return order
    }

    /// Records one reply: a retriable status schedules a re-send; anything else is the job's answer.
    static func receive(_ message: KafkaMessage, prefix: [UInt8], at now: ContinuousClock.Instant, tracker: Tracker) {
        guard let id = message.header("correlation-id"), id.starts(with: prefix),
            let index = Int(String(decoding: id.dropFirst(prefix.count), as: UTF8.self))
        else {
            tracker.state.withLock { $0.unknownReplies += 1 }
            return
        }
        let status = message.header("ksm-status").flatMap { Int32(String(decoding: $0, as: UTF8.self)) } ?? 0
        let retriable = KSMStatus(rawValue: status).isRetriable
        var retryAfter: Int64 = 0
        if retriable, let reply = try? LicenseReply(json: message.value) { retryAfter = reply.retryAfterMilliseconds ?? 1_000 }
        tracker.state.withLock { s in
            guard s.jobs.indices.contains(index) else {
                s.unknownReplies += 1
                return
            }
            if retriable {
                s.retriable += 1
                s.retries.append((index, now + .milliseconds(retryAfter)))
                return
            }
            s.jobs[index].finalReplies += 1
            if s.jobs[index].answer == nil {
                s.answered += 1
                s.jobs[index].answer = message.value
                s.jobs[index].answeredAt = now
            }
        }
    }
}
