import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import Kafka
import Licensing
import Logging
import Synchronization

/// End-to-end CKCs per second through Kafka and Redis, against the in-process FairPlay rate on the
/// same cores measured in the same run. Jobs are made before the clock starts, so the load generator's
/// own RSA work does not count; every reply is checked after the clock stops.
package struct EndToEndBenchmark: Sendable {
    package struct Result: Codable, Sendable {
        package var jobs: Int
        package var correct: Int
        package var workers: Int
        package var cryptoThreads: Int
        package var inProcessCKCPerSecond: Double
        /// `LicenseProcessor` with Redis, batches of 128 one after another, no Kafka.
        package var processorCKCPerSecond: Double
        package var endToEndCKCPerSecond: Double
        package var ratio: Double
        /// Replies per second between the 10th and the 90th percentile of arrivals: the fleet's
        /// sustained rate once the pipeline is full, without the ramp (first fetch, first batch) and
        /// the tail (the last batches), which weigh on short runs.
        package var steadyCKCPerSecond: Double
        package var steadyRatio: Double
        /// From the first send to the first reply: the pipeline's fill time.
        package var firstReplyMilliseconds: Double
        /// CPU microseconds per job by component during the end-to-end run (``CPUAccount``), and
        /// during the in-process baseline: the difference is what Kafka, Redis and the worker cost.
        package var cpuMicrosecondsPerJob: [String: Double]
        package var inProcessCPUMicrosecondsPerJob: [String: Double]
        /// CPU time spent during the end-to-end run over the cores' time: below 1, the pipeline left
        /// cores idle (waiting on round trips) rather than running out of CPU.
        package var cpuUtilization: Double
        package var latencyMilliseconds: LoadReport.Latency
        /// Batches the workers processed: jobs / batches is the mean batch size.
        package var batches: Int

        enum CodingKeys: String, CodingKey {
            case jobs, correct, workers, ratio, batches
            case steadyCKCPerSecond = "steady_ckc_per_second"
            case steadyRatio = "steady_ratio"
            case firstReplyMilliseconds = "first_reply_ms"
            case cpuMicrosecondsPerJob = "cpu_us_per_job"
            case inProcessCPUMicrosecondsPerJob = "in_process_cpu_us_per_job"
            case cpuUtilization = "cpu_utilization"
            case cryptoThreads = "crypto_threads"
            case inProcessCKCPerSecond = "in_process_ckc_per_second"
            case processorCKCPerSecond = "processor_ckc_per_second"
            case endToEndCKCPerSecond = "end_to_end_ckc_per_second"
            case latencyMilliseconds = "latency_ms"
        }
    }

    package var brokers: String
    package var store: any LicenseStore
    package var server: KeyServerModule
    package var trust: DeviceTrust
    package var catalog: DemoCatalog
    package var keyring: KeyEncryptionKeyring
    package var jobs: Int
    package var workers: Int
    /// Partitions of the requests topic.
    package var partitions: Int
    /// Worker batch size (default: the worker's) and concurrent batches (nil: four per crypto thread of the pool, as `ksm serve`).
    package var batchSize = WorkerConfiguration(brokers: "").maximumBatchSize
    package var concurrentBatches: Int?
    /// redis-server's process ID, to charge its CPU time to the run (nil: Redis is elsewhere).
    package var redisPID: Int32?
    package var logger: Logger

    package init(
        brokers: String, store: any LicenseStore, server: KeyServerModule, trust: DeviceTrust, catalog: DemoCatalog,
        keyring: KeyEncryptionKeyring, jobs: Int, workers: Int, partitions: Int = 12, logger: Logger
    ) {
        self.brokers = brokers
        self.store = store
        self.server = server
        self.trust = trust
        self.catalog = catalog
        self.keyring = keyring
        self.jobs = jobs
        self.workers = workers
        self.partitions = partitions
        self.logger = logger
    }

    struct Prepared: Sendable {
        var id: String
        var account: String
        var body: [UInt8]
        var spc: [UInt8]
        var session: DeviceSession
        var asset: String
    }

    package func run() async throws -> Result {
        let pool = CryptoPool()
        defer { pool.shutdown() }
        // Jobs: one viewer each (own account, own lease slot), spread over the catalogue's streams.
        let runID = String(UInt64.random(in: 0..<UInt64.max), radix: 36)
        let prepared: [Prepared] = await pool.map(Array(0..<jobs)) { index -> Prepared? in
            let device = SimulatedDevice(trust: trust)
            let asset = catalog.assetID(stream: index % max(catalog.streams, 1), period: 0)
            var options = SPCOptions()
            options.assetID = Array(asset.utf8)
            options.playback = MediaPlaybackInfo(creationDate: 1_790_000_000, state: .readyToPlay, sessionID: UInt64(index + 1))
            guard let (spc, session) = try? device.makeSPC(options),
                let job = try? LicenseJob(
                    id: StoreIdentifier("\(runID)-\(index)"), tenant: StoreIdentifier(catalog.tenant), account: StoreIdentifier("bench-\(runID)-\(index)"),
                    spc: spc)
            else { return nil }
            return Prepared(id: "\(runID)-\(index)", account: "bench-\(runID)-\(index)", body: job.jsonBytes(), spc: spc, session: session, asset: asset)
        }.compactMap { $0 }

        // Baseline: SPC to CKC on the same pool, no Kafka, no Redis; measured before and after the
        // end-to-end run and averaged, since the host's speed drifts.
        let sample = Array(prepared.prefix(max(200, prepared.count / 2)))
        let server = self.server
        let baseline = InProcessBaseline(server: server, pool: pool, spcs: sample.map(\.spc))
        await baseline.warmUp()
        let others = redisPID.map { ["redis-server": [$0]] } ?? [:]
        let baselineCPU = CPUAccount.sample(processes: others)
        let baselineBefore = await baseline.measure()
        let baselineCPUSpent = CPUAccount.sample(processes: others) - baselineCPU

        // The processor alone (job JSON, Redis fetch and lease script, CKC, reply JSON), no Kafka:
        // splits the end-to-end gap between the license pipeline and the Kafka path.
        let processor = LicenseProcessor(keyServer: server, store: store, keyring: keyring, pool: pool, logger: logger)
        let processorJobs: [[UInt8]] = sample.enumerated().compactMap { index, p in
            guard
                let job = try? LicenseJob(
                    id: StoreIdentifier("\(runID)-p\(index)"), tenant: StoreIdentifier(catalog.tenant),
                    account: StoreIdentifier("bench-\(runID)-p\(index)"), spc: p.spc)
            else { return nil }
            return job.jsonBytes()
        }
        let processorStart = ContinuousClock.now
        var processed = 0
        for chunk in stride(from: 0, to: processorJobs.count, by: 128) {
            let replies = await processor.process(encoded: Array(processorJobs[chunk..<min(chunk + 128, processorJobs.count)]))
            processed += replies.filter { $0.status == .ok }.count
            _ = replies.map { $0.jsonBytes() }
        }
        let processorRate = Double(processed) / (ContinuousClock.now - processorStart).seconds

        // The fleet: workers in this process, the same pool for their crypto.
        let fleet = (0..<max(1, workers)).map { _ in
            var c = WorkerConfiguration(brokers: brokers)
            c.kafkaProperties = ["session.timeout.ms": "6000"]
            c.maximumBatchSize = batchSize
            c.concurrentBatches = concurrentBatches ?? WorkerConfiguration.concurrentBatches(forCryptoThreads: pool.threadCount)
            return LicenseWorker(
                configuration: c, processor: LicenseProcessor(keyServer: server, store: store, keyring: keyring, pool: pool, logger: logger), logger: logger)
        }
        // The workers, the reply reader and the batch sends are child tasks: they end with the
        // measurement, whichever way it ends.
        let clock = BenchmarkClock()
        let measured = try await withThrowingTaskGroup(of: Void.self, returning: EndToEndMeasurement.self) { background in
            for worker in fleet { background.addTask { try await worker.run() } }
            // Start the clock only once the group is settled: every worker owns partitions, all 12 are
            // owned, and that held for a second (cooperative rebalancing moves partitions in steps).
            let joined = ContinuousClock.now + .seconds(30)
            var settledSince: ContinuousClock.Instant?
            while ContinuousClock.now < joined {
                let owned = fleet.map { $0.statistics.snapshot.assignedPartitions }
                if owned.allSatisfy({ $0 > 0 }), owned.reduce(0, +) == partitions {
                    if let since = settledSince, ContinuousClock.now - since > .seconds(1) { break }
                    settledSince = settledSince ?? .now
                } else {
                    settledSince = nil
                }
                try await Task.sleep(for: .milliseconds(50))
            }

            var producerConfig = KafkaProducer.Configuration(bootstrapServers: brokers)
            producerConfig.properties = ["linger.ms": "2"]
            let producer = try KafkaProducer(configuration: producerConfig, logger: logger)
            await producer.warmUp(topics: ["fps.license.requests"])
            var consumerConfig = KafkaConsumer.Configuration(bootstrapServers: brokers, groupID: "bench-\(runID)", topics: ["fps.license.replies"])
            consumerConfig.properties = ["auto.offset.reset": "earliest", "fetch.wait.max.ms": "10", "fetch.error.backoff.ms": "50"]
            // Room for every reply: a full buffer would pause the partitions, and librdkafka 2.0.2 resumes slowly.
            consumerConfig.eventBufferSize = max(consumerConfig.eventBufferSize, 2 * jobs)
            let consumer = try KafkaConsumer(configuration: consumerConfig, logger: logger)
            let assigned = AsyncStream<Void>.makeStream()
            background.addTask {
                var announced = false
                // Batches of events: the client's own overhead is charged to the end-to-end figure, so it
                // uses the efficient path a real edge would.
                for await events in consumer.eventBatches(limit: 1_024) {
                    let now = ContinuousClock.now
                    var batch: [(String, [UInt8])] = []
                    for event in events {
                        switch event {
                        case .assigned:
                            if !announced {
                                announced = true
                                assigned.continuation.yield()
                            }
                        case .message(let m):
                            // Match by the correlation header and keep the bytes: replies are decoded after the
                            // clock stops, so the client's JSON work is not charged to the fleet.
                            if let id = m.header("correlation-id") { batch.append((String(decoding: id, as: UTF8.self), m.value)) }
                        default: break
                        }
                    }
                    if !batch.isEmpty { clock.received.withLock { for (id, value) in batch { $0[id] = (value, now) } } }
                }
            }
            for await _ in assigned.stream { break }

            let cpuAtStart = CPUAccount.sample(processes: others)
            let start = ContinuousClock.now
            // All jobs at once, in batch sends of 500 (one delivery wait each).
            for chunk in stride(from: 0, to: prepared.count, by: 500) {
                let slice = prepared[chunk..<min(chunk + 500, prepared.count)]
                let now = ContinuousClock.now
                clock.sent.withLock { for p in slice { $0[p.id] = now } }
                let records = slice.map {
                    KafkaProducer.Record(
                        topic: "fps.license.requests", key: Array($0.account.utf8), value: $0.body,
                        headers: [("correlation-id", Array($0.id.utf8))])
                }
                background.addTask { _ = await producer.send(records) }
            }
            let deadline = ContinuousClock.now + .seconds(120)
            while clock.received.withLock({ $0.count }) < prepared.count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            let cpuSpent = CPUAccount.sample(processes: others) - cpuAtStart
            let wall = (ContinuousClock.now - start).seconds
            let replies = clock.received.withLock { $0 }
            let end = replies.values.map(\.1).max() ?? ContinuousClock.now
            let rate = Double(replies.count) / (end - start).seconds
            let arrivals = replies.values.map { ($0.1 - start).seconds }.sorted()
            let steadyRate = SteadyRate.perSecond(arrivals, whole: rate)

            await consumer.close()
            await producer.close()
            // Ends the reader and the workers (their shutdown commits what they answered).
            background.cancelAll()
            return EndToEndMeasurement(
                cpuSpent: cpuSpent, wall: wall, replies: replies, start: start, end: end, arrivals: arrivals, rate: rate, steadyRate: steadyRate)
        }
        let (cpuSpent, wall, replies, start, end, rate, steadyRate) = (
            measured.cpuSpent, measured.wall, measured.replies, measured.start, measured.end, measured.rate, measured.steadyRate
        )
        let arrivals = measured.arrivals
        let inProcessRate = (baselineBefore + (await baseline.measure())) / 2

        var correct = 0
        var latencies: [Double] = []
        let sent = clock.sent.withLock { $0 }
        for p in prepared {
            guard let (bytes, at) = replies[p.id], let reply = try? LicenseReply(json: bytes) else { continue }
            if let s = sent[p.id] { latencies.append((at - s).seconds * 1000) }
            if reply.status == .ok, let ckc = reply.ckc, let opened = try? CKCOpener.open(ckc, session: p.session),
                opened.contentKey == catalog.contentKey(assetID: p.asset)
            {
                correct += 1
            }
        }
        return Result(
            jobs: prepared.count, correct: correct, workers: fleet.count, cryptoThreads: pool.threadCount,
            inProcessCKCPerSecond: inProcessRate.rounded(), processorCKCPerSecond: processorRate.rounded(), endToEndCKCPerSecond: rate.rounded(),
            ratio: (rate / inProcessRate * 1000).rounded() / 1000,
            steadyCKCPerSecond: steadyRate.rounded(), steadyRatio: (steadyRate / inProcessRate * 1000).rounded() / 1000,
            firstReplyMilliseconds: ((arrivals.first ?? 0) * 10_000).rounded() / 10,
            cpuMicrosecondsPerJob: cpuSpent.microsecondsPerJob(replies.count),
            inProcessCPUMicrosecondsPerJob: baselineCPUSpent.microsecondsPerJob(sample.count),
            cpuUtilization: (cpuSpent.seconds.values.reduce(0, +) / (wall * Double(ProcessInfo.processInfo.activeProcessorCount)) * 100).rounded() / 100,
            latencyMilliseconds: .init(milliseconds: latencies),
            batches: fleet.reduce(0) { $0 + $1.statistics.snapshot.batches })
    }
}

/// Send and receive times of the benchmark's jobs, shared by the sending tasks and the reply reader.
final class BenchmarkClock: Sendable {
    let sent = Mutex<[String: ContinuousClock.Instant]>([:])
    let received = Mutex<[String: ([UInt8], ContinuousClock.Instant)]>([:])
}
