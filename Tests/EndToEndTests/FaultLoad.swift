import FairPlay
import FairPlayDevice
import Foundation
import KSMLoad
import KSMService
import Kafka
import Licensing
import Synchronization
import Testing
import Wire

/// License jobs through a fleet while a fault happens, as a platform edge sends them: every job from
/// a device of its own, for an account of its own (so each granted job holds exactly one lease slot),
/// every reply kept with its bytes and arrival time, and a retriable reply (`storeUnavailable`)
/// answered by sending the same job again after a short backoff, as a client retry would (or, with
/// ``honoursRetryAfter``, after the reply's `retry-after-ms`, as an edge that obeys it would). A
/// record on the reply topic that is no reply is counted (``State/undecodable``) and fails the verdict.
final class FaultLoad: Sendable {
    /// One job: what was sent, and what its device needs to check the answer.
    struct Job: Sendable {
        var id: String
        var account: String
        var bytes: [UInt8]
        var session: DeviceSession
        var expectedKey: [UInt8]
        var firstSent: ContinuousClock.Instant
        var sends = 1
    }

    /// One reply as it arrived on the reply topic.
    struct Arrival: Sendable {
        var bytes: [UInt8]
        var reply: LicenseReply
        var at: ContinuousClock.Instant
        /// The worker marked it `ksm-duplicate: 1`: the stored bytes of an earlier answer.
        var markedDuplicate = false
        /// Where the record sits on the reply topic, so a surprising reply can be found again.
        var partition: Int32 = -1
        var offset: Int64 = -1
        /// The record's producer timestamp (ms): one produced record written twice carries it twice.
        var producedAt: Int64?

        /// Names the record and what it says, for a failure message (never the CKC bytes).
        var evidence: String {
            "\(reply.id) \(reply.status.name) rule \(reply.rule) ckc \(reply.ckc.map { "\($0.count) bytes" } ?? "none") at \(partition)/\(offset)"
        }
    }

    struct State {
        var jobs: [String: Job] = [:]
        var order: [String] = []
        var arrivals: [String: [Arrival]] = [:]
        /// Jobs whose latest reply is retriable and that were not sent again since.
        var retryDue: [String: ContinuousClock.Instant] = [:]
        /// Reply records already seen, by partition and offset: the reader's own consumer may read a
        /// record twice after a broker outage, which is not a second reply.
        var seen: Set<[Int64]> = []
        var foreign = 0
        /// Records on the reply topic that do not decode as a reply, by partition/offset: a worker
        /// that wrote one broke the reply contract, and a reader that skipped it would miss a job's answer.
        var undecodable: [String] = []

        /// Takes one record of the reply topic, read at `now`: a reply to a job of the load is kept
        /// (once per partition and offset) and, when retriable, its job is due to be sent again
        /// after 200 ms (or its `retry-after-ms` when `honoursRetryAfter`); a record that does not
        /// decode as a reply is counted in ``undecodable``.
        mutating func receive(_ message: KafkaMessage, at now: ContinuousClock.Instant, honoursRetryAfter: Bool) {
            guard seen.insert([Int64(message.partition), message.offset]).inserted else { return }
            guard let reply = try? LicenseReply(json: message.value) else {
                undecodable.append("\(message.partition)/\(message.offset) (\(message.value.count) bytes)")
                return
            }
            guard jobs[reply.id] != nil else {
                foreign += 1
                return
            }
            arrivals[reply.id, default: []].append(
                Arrival(
                    bytes: message.value, reply: reply, at: now, markedDuplicate: message.header("ksm-duplicate") == Array("1".utf8),
                    partition: message.partition, offset: message.offset, producedAt: message.timestamp))
            let backoff = honoursRetryAfter ? Duration.milliseconds(reply.retryAfterMilliseconds ?? 200) : .milliseconds(200)
            if reply.isRetriable { retryDue[reply.id] = now + backoff }
        }
    }

    let prefix: String
    let catalog: DemoCatalog
    let trust: DeviceTrust
    let producer: KafkaProducer
    let consumer: KafkaConsumer
    let state = Mutex(State())
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let sending = Atomic<Bool>(false)

    /// The reply reader's consumer group.
    let groupID: String
    /// A retriable reply's job is sent again after the reply's `retry-after-ms` (200 ms when it has
    /// none) instead of after 200 ms.
    let honoursRetryAfter: Bool

    /// - Parameter groupID: the reply reader's group (a fresh one by default); a test that places
    ///   the group's coordinator on a broker names it first.
    init(fleet: Fleet, prefix: String, groupID: String = "fault-client-\(UUID().uuidString)", honoursRetryAfter: Bool = false) async throws {
        self.prefix = prefix
        self.groupID = groupID
        self.honoursRetryAfter = honoursRetryAfter
        catalog = fleet.catalog
        var p = KafkaProducer.Configuration(bootstrapServers: fleet.bootstrap)
        p.properties = ["linger.ms": "1"]
        producer = try KafkaProducer(configuration: p)
        var c = KafkaConsumer.Configuration(bootstrapServers: fleet.bootstrap, groupID: groupID, topics: ["fps.license.replies"])
        c.properties = ["auto.offset.reset": "earliest", "fetch.wait.max.ms": "10", "fetch.error.backoff.ms": "50", "session.timeout.ms": "6000"]
        c.eventBufferSize = 8192
        consumer = try KafkaConsumer(configuration: c)
        let root = KSMBinary.packageRoot.appendingPathComponent("Fixtures/test-credentials")
        let ask = [UInt8](
            hexString: try String(contentsOf: root.appendingPathComponent("test_ask.hex"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))!
        trust = try DeviceTrust(
            certificateDER: Array(try Data(contentsOf: root.appendingPathComponent("test_certificate.der"))),
            publicKey2048: try RSAPublicKey(publicKeyPEMOrDER: Array(try Data(contentsOf: root.appendingPathComponent("test_public_key_2048.pem")))), ask: ask)
        await producer.warmUp(topics: ["fps.license.requests"])
        let assigned = AsyncStream<Void>.makeStream()
        let consumer = self.consumer
        let reader = Task { [weak self] in
            for await event in consumer.events {
                switch event {
                case .assigned: assigned.continuation.yield()
                case .message(let message): self?.record(message)
                default: break
                }
            }
        }
        // Replies are read from the start of the topic, but only once the reader owns its partitions
        // does a missed reply become impossible: wait for that before any job goes out.
        for await _ in assigned.stream { break }
        let retrier = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                await self?.retryDueJobs()
            }
        }
        tasks.withLock { $0 = [reader, retrier] }
    }

    func close() async {
        stopLoad()
        for task in tasks.withLock({ $0 }) { task.cancel() }
        await consumer.close()
        await producer.close()
    }

    // MARK: Sending

    /// Sends job number `n` (stream `n % streams`, period 0, playback state "ready to play").
    func send(_ n: Int) async throws {
        try await send(try makeJob(n))
    }

    /// Builds job number `n` (its SPC from a device of its own) without sending it.
    func makeJob(_ n: Int) throws -> Job {
        let id = "\(prefix)-\(n)"
        let asset = catalog.assetID(stream: n % catalog.streams, period: 0)
        var options = SPCOptions()
        options.assetID = Array(asset.utf8)
        options.playback = MediaPlaybackInfo(
            creationDate: UInt32(Date().timeIntervalSince1970), state: .readyToPlay, sessionID: UInt64.random(in: 1..<UInt64.max))
        let (spc, session) = try SimulatedDevice(trust: trust).makeSPC(options)
        let account = "\(prefix)-acct-\(n)"
        let job = LicenseJob(id: try StoreIdentifier(id), tenant: try StoreIdentifier(catalog.tenant), account: try StoreIdentifier(account), spc: spc)
        return Job(id: id, account: account, bytes: job.jsonBytes(), session: session, expectedKey: catalog.contentKey(assetID: asset), firstSent: .now)
    }

    /// Records a built job as sent now and publishes it.
    private func send(_ job: Job) async throws {
        var record = job
        record.firstSent = .now
        state.withLock { [record] in
            $0.jobs[record.id] = record
            $0.order.append(record.id)
        }
        try await publish(record)
    }

    private func publish(_ job: Job) async throws {
        // librdkafka retries inside (message.timeout.ms, 300 s by default) through broker outages.
        _ = try await producer.send(
            topic: "fps.license.requests", key: Array(job.account.utf8), value: job.bytes,
            headers: [("correlation-id", Array(job.id.utf8))])
    }

    /// Sends `count` jobs at `perSecond` in the background, numbered from `first`; ``stopLoad()`` ends it early.
    func startLoad(first: Int = 0, count: Int, perSecond: Double) {
        sending.store(true, ordering: .sequentiallyConsistent)
        let task = Task { [self] in
            let start = ContinuousClock.now
            let interval = Duration.seconds(1 / perSecond)
            await withTaskGroup(of: Void.self) { group in
                for n in first..<(first + count) {
                    guard sending.load(ordering: .sequentiallyConsistent) else { break }
                    try? await Task.sleep(until: start + interval * (n - first))
                    group.addTask { try? await self.send(n) }
                }
            }
            sending.store(false, ordering: .sequentiallyConsistent)
        }
        tasks.withLock { $0.append(task) }
    }

    /// Sends `count` jobs at once (a storm), numbered from `first`. Every job is built first, so
    /// building SPCs (thousands of RSA operations in this process) neither paces the storm nor takes
    /// the CPU from the reply reader, whose arrival times are the measurements.
    func storm(first: Int = 0, count: Int) async {
        await send((first..<(first + count)).compactMap { try? makeJob($0) })
    }

    /// Sends jobs made earlier (``makeJob(_:)``) at once: a storm whose SPCs cost nothing at the
    /// moment it is sent.
    func send(_ jobs: [Job]) async {
        await withTaskGroup(of: Void.self) { group in
            for job in jobs { group.addTask { try? await self.send(job) } }
        }
    }

    func stopLoad() { sending.store(false, ordering: .sequentiallyConsistent) }

    /// Waits until the background load has sent everything (or was stopped).
    func waitForLoad(timeout: Duration = .seconds(60)) async throws {
        try await waitFor("the load to be sent", timeout: timeout) { !self.sending.load(ordering: .sequentiallyConsistent) }
    }

    /// A client retry: a job whose latest reply was retriable goes out again, same ID and bytes, 200 ms later.
    private func retryDueJobs() async {
        let now = ContinuousClock.now
        let due: [Job] = state.withLock { state in
            let ids = state.retryDue.filter { $0.value <= now }.map(\.key)
            return ids.compactMap { id in
                state.retryDue[id] = nil
                state.jobs[id]?.sends += 1
                return state.jobs[id]
            }
        }
        for job in due { try? await publish(job) }
    }

    private func record(_ message: KafkaMessage) {
        let now = ContinuousClock.now
        let honours = honoursRetryAfter
        state.withLock { $0.receive(message, at: now, honoursRetryAfter: honours) }
    }

    // MARK: Observing

    /// Jobs sent so far.
    var sent: Int { state.withLock { $0.jobs.count } }

    /// Jobs whose final (non-retriable) answer arrived.
    var answered: Int { state.withLock { state in state.arrivals.values.filter { $0.contains { !$0.reply.isRetriable } }.count } }

    /// Replies with this status so far.
    func count(_ status: KSMStatus) -> Int {
        state.withLock { state in state.arrivals.values.reduce(0) { $0 + $1.filter { $0.reply.status == status }.count } }
    }

    /// Waits until every job sent so far has its final answer.
    func waitUntilAllAnswered(timeout: Duration = .seconds(60)) async throws {
        try await waitFor("every job to be answered (\(answered) of \(sent))", timeout: timeout) { self.answered == self.sent }
    }

    func waitFor(_ what: @autoclosure () -> String, timeout: Duration, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw ProcessFailure(description: "timed out waiting for \(what())") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    // MARK: Verdict

    /// What the replies say, checked job by job.
    struct Verdict: CustomStringConvertible {
        var jobs = 0
        /// Jobs whose final answer is a CKC that opens, on the job's device, to the catalogue's key.
        var correct = 0
        var wrong: [String] = []
        /// Jobs with no final answer.
        var missing: [String] = []
        /// Jobs answered more than once finally, every copy byte-identical (a redelivery replayed).
        var identicalDuplicates = 0
        /// Jobs answered finally more than once with different bytes (each a correct CKC, or it is in `wrong`).
        var differingDuplicates: [String] = []
        /// Jobs answered finally more than once with more than one copy not marked `ksm-duplicate`.
        var unmarkedDuplicates: [String] = []
        /// The unmarked duplicates whose copies are alike in bytes, partition and producer timestamp:
        /// what one produce request written twice looks like (appended by a dying broker, its answer
        /// lost, sent again after the failover; librdkafka 2.0.2's mock checks no producer sequence).
        /// A clue for whoever reads a failure, not an excuse: a worker that published one job twice
        /// in the same millisecond looks the same, so these fail the verdict like any unmarked copy.
        var resendLookalikes: [String] = []
        /// Retriable replies seen (`storeUnavailable`, `overloaded`, `rateLimited`), by status name.
        var retriableByStatus: [String: Int] = [:]
        /// Retriable replies that carried a CKC (broke fail-closed), each named by ``Arrival/evidence``.
        /// Only the `ckc` field counts: an `overloaded` or `rateLimited` reply without one is a
        /// correct "no license, ask again" (until 74d7795 this check also counted every retriable
        /// status other than `storeUnavailable`, so a shed job read as "a retriable reply carried a license").
        var retriableWithCKCEvidence: [String] = []
        var sends = 0
        /// Reply-topic records that are no reply (``State/undecodable``).
        var undecodable: [String] = []

        var retriable: Int { retriableByStatus.values.reduce(0, +) }
        var retriableWithCKC: Int { retriableWithCKCEvidence.count }

        var description: String {
            let byStatus = retriableByStatus.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            return "\(jobs) jobs, \(correct) correct, \(wrong.count) wrong \(wrong.prefix(3)), \(missing.count) missing \(missing.prefix(3)), "
                + "\(identicalDuplicates) identical duplicates, \(differingDuplicates.count) differing duplicates, \(unmarkedDuplicates.count) unmarked, \(resendLookalikes.count) of them like a producer's resend \(resendLookalikes.prefix(3)), "
                + "\(retriable) retriable replies [\(byStatus)] (\(retriableWithCKC) with a CKC \(retriableWithCKCEvidence.prefix(3))), \(sends) sends, "
                + "\(undecodable.count) undecodable records \(undecodable.prefix(3))"
        }
    }

    func verdict() -> Verdict {
        state.withLock { Self.verdict(of: $0) }
    }

    /// The verdict over a snapshot of the client's state: pure, so the rules are tested without a fleet.
    static func verdict(of state: State) -> Verdict {
        var v = Verdict()
        v.jobs = state.jobs.count
        v.undecodable = state.undecodable
        for id in state.order {
            guard let job = state.jobs[id] else { continue }
            v.sends += job.sends
            let arrivals = state.arrivals[id] ?? []
            let retriable = arrivals.filter(\.reply.isRetriable)
            for arrival in retriable { v.retriableByStatus[arrival.reply.status.name, default: 0] += 1 }
            v.retriableWithCKCEvidence += retriable.filter { $0.reply.ckc != nil }.map(\.evidence)
            let finals = arrivals.filter { !$0.reply.isRetriable }
            guard let first = finals.first else {
                v.missing.append(id)
                continue
            }
            var problems: [String] = []
            for arrival in finals {
                guard arrival.reply.status == .ok, let ckc = arrival.reply.ckc else {
                    problems.append("\(id): \(arrival.reply.status.name) \(arrival.reply.reason)")
                    continue
                }
                do {
                    let opened = try CKCOpener.open(ckc, session: job.session)
                    if opened.contentKey != job.expectedKey { problems.append("\(id): wrong content key") }
                } catch {
                    problems.append("\(id): CKC does not open: \(error)")
                }
            }
            if let problem = problems.first {
                v.wrong.append(problem)
                continue
            }
            v.correct += 1
            if finals.count > 1 {
                if finals.allSatisfy({ $0.bytes == first.bytes }) { v.identicalDuplicates += 1 } else { v.differingDuplicates.append(id) }
                // Every copy but one is marked (the first published may be either, when two
                // workers answered the job at once and the second got the first's stored bytes).
                let unmarked = finals.filter { !$0.markedDuplicate }
                if unmarked.count > 1 {
                    // Where each copy sits on the reply topic (partition/offset), to find it again.
                    let places = "\(id)@\(finals.map { "\($0.partition)/\($0.offset)" }.joined(separator: ","))"
                    v.unmarkedDuplicates.append(places)
                    if Self.producedRecords(unmarked) == 1 { v.resendLookalikes.append(places) }
                }
            }
        }
        return v
    }

    /// How many produced records `copies` look like: copies alike in bytes, partition and producer
    /// timestamp (milliseconds) may be one record written more than once.
    static func producedRecords(_ copies: [Arrival]) -> Int {
        var records: [Arrival] = []
        for copy in copies {
            let same = records.contains { record in
                guard let stamp = record.producedAt, stamp == copy.producedAt else { return false }
                return record.partition == copy.partition && record.bytes == copy.bytes
            }
            if !same { records.append(copy) }
        }
        return records.count
    }

    /// How long the fleet took to recover from a fault that ended (was cleared, or for a one-shot
    /// fault was injected) at `faultEnd`.
    struct Recovery: CustomStringConvertible {
        /// From `faultEnd` to the final answer of the last job sent before `faultEnd` (the backlog the fault caught).
        var backlog: Duration
        /// From `faultEnd` to the first correct answer to a job sent after `faultEnd` (nil: none sent).
        var fresh: Duration?
        var description: String {
            "backlog answered after \(Self.seconds(backlog)), first fresh job answered after \(fresh.map(Self.seconds) ?? "n/a")"
        }
        static func seconds(_ d: Duration) -> String { String(format: "%.2f s", Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18) }
    }

    func recovery(after faultEnd: ContinuousClock.Instant) -> Recovery {
        state.withLock { state in
            var backlog = Duration.zero
            var fresh: Duration?
            for (id, job) in state.jobs {
                guard let final = state.arrivals[id]?.first(where: { !$0.reply.isRetriable }) else { continue }
                if job.firstSent <= faultEnd {
                    backlog = max(backlog, final.at - faultEnd)
                } else if final.reply.status == .ok {
                    let d = final.at - faultEnd
                    fresh = fresh.map { min($0, d) } ?? d
                }
            }
            return Recovery(backlog: backlog, fresh: fresh)
        }
    }

    /// One `retry-after-ms` a retriable reply gave, and how long the backlog it was given behind
    /// took to clear: from the reply's arrival to the last final answer of the jobs sent before it
    /// that were never shed (a shed job's own answer waits for its retry-after, so it cannot count).
    struct RetryAdvice: CustomStringConvertible {
        var id: String
        var status: KSMStatus
        var retryAfter: Duration
        var clearance: Duration
        var description: String {
            "\(id) \(status.name) retry-after \(Recovery.seconds(retryAfter)), backlog cleared after \(Recovery.seconds(clearance))"
        }
    }

    /// Every retriable reply's advice with its backlog's clearance (``RetryAdvice``).
    func retryAdvice() -> [RetryAdvice] {
        state.withLock { state in
            let shed = Set(state.arrivals.filter { $0.value.contains { $0.reply.status == .overloaded } }.keys)
            // Jobs never shed, by when they were first sent, with their final answers' arrival.
            let served: [(sent: ContinuousClock.Instant, answered: ContinuousClock.Instant)] = state.jobs.values.compactMap { job in
                guard !shed.contains(job.id), let final = state.arrivals[job.id]?.first(where: { !$0.reply.isRetriable }) else { return nil }
                return (job.firstSent, final.at)
            }
            var advice: [RetryAdvice] = []
            for (id, arrivals) in state.arrivals {
                for arrival in arrivals where arrival.reply.isRetriable {
                    guard let milliseconds = arrival.reply.retryAfterMilliseconds else { continue }
                    let cleared = served.filter { $0.sent <= arrival.at }.map(\.answered).max() ?? arrival.at
                    advice.append(
                        RetryAdvice(
                            id: id, status: arrival.reply.status, retryAfter: .milliseconds(milliseconds),
                            clearance: max(.zero, cleared - arrival.at)))
                }
            }
            return advice
        }
    }

    /// The job answered longest after `instant` or its own first send, whichever came later, and how
    /// long after: with `instant` the moment a fault ended, how long any job waited on the fault's
    /// account, the ones that arrived after it included (nil before any job was answered).
    func slowestAnswer(after instant: ContinuousClock.Instant) -> (id: String, after: Duration)? {
        state.withLock { state in
            var slowest: (id: String, after: Duration)?
            for (id, job) in state.jobs {
                guard let final = state.arrivals[id]?.first(where: { !$0.reply.isRetriable }) else { continue }
                let after = final.at - max(job.firstSent, instant)
                if after > slowest?.after ?? .seconds(-1_000_000) { slowest = (id, after) }
            }
            return slowest
        }
    }

    /// Each answered job's latency, first send to final answer, in ascending order.
    func latencies() -> [Duration] {
        state.withLock { state in
            state.jobs.values.compactMap { job in
                state.arrivals[job.id]?.first { !$0.reply.isRetriable }.map { $0.at - job.firstSent }
            }.sorted()
        }
    }

    /// Accounts of every job sent, for the slot check.
    var accounts: [String] { state.withLock { state in state.order.compactMap { state.jobs[$0]?.account } } }
}

extension FaultLoad.Verdict {
    /// Every job has a correct CKC, none is wrong or missing, and no retriable reply carries a
    /// license. A job answered again (redelivered after kill -9, a broker's failover, or a final
    /// commit the rebalancing group refused) gets the bytes stored with its first answer
    /// (docs/faults.md), marked `ksm-duplicate: 1`: never a second, different CKC.
    func expectEveryJobAnsweredOnce(jobs: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(self.jobs == jobs, sourceLocation: sourceLocation)
        #expect(correct == jobs, "\(self)", sourceLocation: sourceLocation)
        #expect(wrong.isEmpty && missing.isEmpty, "\(self)", sourceLocation: sourceLocation)
        #expect(differingDuplicates.isEmpty, "a job was answered twice with different bytes: \(self)", sourceLocation: sourceLocation)
        #expect(unmarkedDuplicates.isEmpty, "a duplicate reply was not marked ksm-duplicate: \(self)", sourceLocation: sourceLocation)
        #expect(retriableWithCKC == 0, "a retriable reply carried a license: \(self)", sourceLocation: sourceLocation)
        #expect(undecodable.isEmpty, "the reply topic held records that are no reply: \(self)", sourceLocation: sourceLocation)
    }
}
