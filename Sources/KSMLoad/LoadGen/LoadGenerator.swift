import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import Kafka
import Licensing
import Logging
import Synchronization

/// Simulated Apple devices watching live streams: sends license jobs through Kafka, opens every CKC
/// that comes back with the device's own session, and checks the key against the catalogue.
package struct LoadGenerator: Sendable {
    package let configuration: LoadGeneratorConfiguration
    package let catalog: DemoCatalog
    package let trust: DeviceTrust
    let logger: Logger

    package init(configuration: LoadGeneratorConfiguration, catalog: DemoCatalog, trust: DeviceTrust, logger: Logger) {
        self.configuration = configuration
        self.catalog = catalog
        self.trust = trust
        self.logger = logger
    }

    /// One request in flight: what the device needs to check the answer.
    struct Pending: Sendable {
        var session: DeviceSession
        var expectedKey: [UInt8]
        var expectedIV: [UInt8]
        var sentAt: ContinuousClock.Instant
        var burst: Int?
    }

    final class Tracker: Sendable {
        struct State {
            var pending: [String: Pending] = [:]
            var answered: Set<String> = []
            var report = LoadReport()
            var latencies: [Double] = []
            var burstLatencies: [Double] = []
            var burstStart: [Int: ContinuousClock.Instant] = [:]
            var burstLastReply: [Int: ContinuousClock.Instant] = [:]
        }
        let state = Mutex(State())
    }

    /// Runs the whole scenario and returns what it measured. `progress` gets a line about once a second.
    package func run(progress: (@Sendable (String) -> Void)? = nil) async throws -> LoadReport {
        let runID = String(UInt64.random(in: 0..<UInt64.max), radix: 36)
        let viewers = (0..<configuration.viewers).map { _ in SimulatedDevice(trust: trust) }
        let sessions = (0..<configuration.viewers).map { _ in UInt64.random(in: 1..<UInt64.max) }
        let accounts = max(1, configuration.accounts ?? configuration.viewers)
        let tracker = Tracker()

        var producerConfig = KafkaProducer.Configuration(bootstrapServers: configuration.brokers)
        producerConfig.properties = configuration.kafkaProperties.merging(["linger.ms": "2"]) { a, _ in a }
        let producer = try KafkaProducer(configuration: producerConfig, logger: logger)
        // librdkafka retries an unreachable broker for its message timeout (300 s) without a word:
        // a run that cannot reach Kafka fails now, saying so.
        let connectDeadline = ContinuousClock.now + configuration.connectTimeout
        while let failure = await producer.warmUp(topics: [configuration.requestsTopic], timeout: .seconds(2))[configuration.requestsTopic] {
            guard ContinuousClock.now < connectDeadline else {
                throw LoadGeneratorError.brokersUnreachable(
                    brokers: configuration.brokers, topic: configuration.requestsTopic,
                    waited: configuration.connectTimeout, reason: failure.code.description)
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        var consumerConfig = KafkaConsumer.Configuration(
            bootstrapServers: configuration.brokers, groupID: "ksm-loadgen-\(runID)",
            topics: [configuration.repliesTopic], properties: configuration.kafkaProperties)
        // "earliest", not "latest": a fresh group resolves "latest" only when it first fetches, and
        // replies to the first jobs can land before that. Replies of other runs carry other IDs and are skipped.
        consumerConfig.properties["auto.offset.reset"] = "earliest"
        // Room for a whole burst of replies: a full buffer pauses partitions, and librdkafka 2.0.2 resumes slowly.
        consumerConfig.eventBufferSize = max(consumerConfig.eventBufferSize, 4 * configuration.viewers)
        consumerConfig.properties["fetch.wait.max.ms"] = consumerConfig.properties["fetch.wait.max.ms"] ?? "10"
        consumerConfig.properties["fetch.error.backoff.ms"] = consumerConfig.properties["fetch.error.backoff.ms"] ?? "50"
        let consumer = try KafkaConsumer(configuration: consumerConfig, logger: logger)

        // Wait until the reply consumer owns its partitions, so no reply is missed.
        let assigned = AsyncStream<Void>.makeStream()
        // The reply reader and the progress ticker are child tasks: they end with the run, whichever
        // way it ends.
        let elapsed = await withTaskGroup(of: Void.self) { background in
            background.addTask {
                var announced = false
                for await event in consumer.events {
                    switch event {
                    case .assigned:
                        if !announced {
                            announced = true
                            assigned.continuation.yield()
                        }
                    case .message(let message):
                        self.receive(message, tracker: tracker)
                    default:
                        break
                    }
                }
            }
            for await _ in assigned.stream { break }

            let start = ContinuousClock.now
            background.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    let (sent, replies, correct) = tracker.state.withLock { ($0.report.sent, $0.report.replies, $0.report.correct) }
                    progress?("sent \(sent)  replies \(replies)  correct \(correct)  \(String(format: "%.1f", (ContinuousClock.now - start).seconds)) s")
                }
            }

            await ViewerScenario(configuration: configuration, periods: catalog.periods).play(
                from: start,
                make: { step in
                    try? makeJob(
                        runID: runID, viewer: step.viewer, device: viewers[step.viewer], session: sessions[step.viewer],
                        account: step.viewer % accounts, period: step.period, state: step.state, priority: step.priority, burst: step.burst)
                },
                burstStarts: { rotation in tracker.state.withLock { $0.burstStart[rotation] = .now } },
                send: { job in await self.send(job, producer: producer, tracker: tracker) })

            // Wait for every reply, or the timeout.
            let deadline = ContinuousClock.now + configuration.replyTimeout
            while ContinuousClock.now < deadline {
                if tracker.state.withLock({ $0.pending.isEmpty }) { break }
                try? await Task.sleep(for: .milliseconds(20))
            }
            let elapsed = (ContinuousClock.now - start).seconds
            await consumer.close()
            background.cancelAll()
            return elapsed
        }
        await producer.close()

        return tracker.state.withLock { state in
            var report = state.report
            report.missing = state.pending.count
            report.seconds = (elapsed * 100).rounded() / 100
            report.repliesPerSecond = (Double(report.replies) / max(elapsed, 0.001)).rounded()
            report.latencyMilliseconds = .init(milliseconds: state.latencies)
            report.burstLatencyMilliseconds = .init(milliseconds: state.burstLatencies)
            var drain = 0.0
            for (burst, begin) in state.burstStart {
                if let last = state.burstLastReply[burst] { drain = max(drain, (last - begin).seconds) }
            }
            report.burstDrainSeconds = (drain * 1000).rounded() / 1000
            return report
        }
    }

    struct Job: Sendable {
        var id: String
        var account: String
        var body: [UInt8]
        var pending: Pending
    }

    func makeJob(
        runID: String, viewer: Int, device: SimulatedDevice, session: UInt64, account: Int, period: Int,
        state: PlaybackState, priority: String, burst: Int?
    ) throws -> Job {
        let stream = viewer % max(catalog.streams, 1)
        let asset = catalog.assetID(stream: stream, period: period)
        var options = SPCOptions()
        options.spcVersion = configuration.spcVersion
        options.assetID = Array(asset.utf8)
        options.playback = MediaPlaybackInfo(creationDate: UInt32(Date().timeIntervalSince1970), state: state, sessionID: session)
        let (spc, deviceSession) = try device.makeSPC(options)
        let id = "\(runID)-\(viewer)-\(period)-\(burst ?? 0)"
        let deadline = Int64(Date().timeIntervalSince1970 * 1000) + Int64(configuration.jobDeadline.seconds * 1000)
        let job = LicenseJob(
            id: try StoreIdentifier(id), tenant: try StoreIdentifier(catalog.tenant), account: try StoreIdentifier("acct-\(account)"),
            spc: spc, deadline: deadline, priority: LicenseJob.Priority(rawValue: priority) ?? .new)
        let bytes = job.jsonBytes()
        return Job(
            id: id, account: "acct-\(account)", body: bytes,
            pending: Pending(
                session: deviceSession, expectedKey: catalog.contentKey(assetID: asset), expectedIV: catalog.contentIV(assetID: asset), sentAt: .now,
                burst: burst))
    }

    func send(_ job: Job, producer: KafkaProducer, tracker: Tracker) async {
        var pending = job.pending
        pending.sentAt = .now
        tracker.state.withLock {
            $0.pending[job.id] = pending
            $0.report.sent += 1
        }
        let headers: [(String, [UInt8])] = [("reply-topic", Array(configuration.repliesTopic.utf8)), ("correlation-id", Array(job.id.utf8))]
        var delay = Duration.milliseconds(20)
        for _ in 0..<20 {
            do {
                _ = try await producer.send(topic: configuration.requestsTopic, key: Array(job.account.utf8), value: job.body, headers: headers)
                return
            } catch {
                logger.warning("loadgen send failed; retrying", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(1))
            }
        }
    }

    /// Checks one reply: a known ID, status 0, a CKC that opens to the expected key and IV.
    func receive(_ message: KafkaMessage, tracker: Tracker) {
        guard let reply = try? LicenseReply(json: message.value) else { return }
        let now = ContinuousClock.now
        let pending: Pending? = tracker.state.withLock { state in
            guard let p = state.pending.removeValue(forKey: reply.id) else {
                if state.answered.contains(reply.id) { state.report.duplicates += 1 }
                return nil
            }
            state.answered.insert(reply.id)
            return p
        }
        guard let pending else { return }
        var verdict: String?
        if reply.status != .ok {
            verdict = "status \(reply.status.name)"
        } else if let ckc = reply.ckc {
            do {
                let opened = try CKCOpener.open(ckc, session: pending.session)
                if opened.contentKey != pending.expectedKey {
                    verdict = "wrong content key"
                } else if opened.contentIV != pending.expectedIV {
                    verdict = "wrong content IV"
                }
            } catch {
                verdict = "CKC does not open: \(error.reason)"
            }
        } else {
            verdict = "status 0 without a CKC"
        }
        let latency = (now - pending.sentAt).seconds * 1000
        tracker.state.withLock { state in
            state.report.replies += 1
            state.report.statuses[reply.status.name, default: 0] += 1
            state.latencies.append(latency)
            if let burst = pending.burst {
                state.burstLatencies.append(latency)
                state.burstLastReply[burst] = max(state.burstLastReply[burst] ?? now, now)
            }
            if let verdict { state.report.wrong[verdict, default: 0] += 1 } else { state.report.correct += 1 }
        }
    }
}
