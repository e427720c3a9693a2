import Foundation
import KSMOperations
import KSMService
import Kafka
import Licensing
import Logging
import Synchronization
import Testing
import Wire

/// The license route without a socket or Kafka: what it puts on the record, and that every path
/// out of a request (answered, timed out, at capacity, not produced, refused) leaves no entry in
/// the pending table.
@Suite(.timeLimit(.minutes(1))) struct EdgeLicenseRouteTests {
    /// An SPC's first bytes (version 1) and padding: enough for the codec's raw shape.
    static let spc: [UInt8] = [0, 0, 0, 1] + [UInt8](repeating: 7, count: 60)

    /// Records what was produced; optionally answers each record as a worker would.
    final class FakeKafka: Sendable {
        let records = Mutex<[KafkaProducer.Record]>([])
        let failure: KafkaError?
        /// Refused at once, as librdkafka refuses a record it cannot queue.
        let refusal: KafkaError?
        let answer: (@Sendable (KafkaProducer.Record) -> LicenseReply?)?
        let waiters: EdgeReplyWaiters

        init(
            waiters: EdgeReplyWaiters, failure: KafkaError? = nil, refusal: KafkaError? = nil,
            answer: (@Sendable (KafkaProducer.Record) -> LicenseReply?)? = nil
        ) {
            self.waiters = waiters
            self.failure = failure
            self.refusal = refusal
            self.answer = answer
        }

        func produce(_ record: KafkaProducer.Record, onFailure: @escaping @Sendable (KafkaError) -> Void) -> KafkaError? {
            records.withLock { $0.append(record) }
            if let refusal { return refusal }
            if let failure {
                // As the broker would: the record is taken, its delivery fails later, on a thread of
                // the producer's (not the cooperative pool, which the suite's busy first minute holds).
                Thread.detachNewThread { onFailure(failure) }
                return nil
            }
            if let reply = answer?(record), let header = record.headers.first(where: { $0.0 == "correlation-id" }) {
                // Delivered before the route waits: the table keeps it for the waiter.
                waiters.deliver(String(decoding: header.1, as: UTF8.self), reply: reply)
            }
            return nil
        }
    }

    static func route(
        _ kafka: FakeKafka, deadline: Duration = .seconds(5), classTopics: Bool = false, admission: any EdgeAdmission = HeaderAccountAdmission()
    ) -> EdgeLicenseRoute {
        var configuration = EdgeConfiguration(host: "127.0.0.1", port: 8080, brokers: "b:9092", instanceID: "edge-1")
        configuration.deadline = deadline
        configuration.classTopics = classTopics
        return EdgeLicenseRoute(
            configuration: configuration, admission: admission, waiters: kafka.waiters, correlationIDs: EdgeCorrelationIDs(nonce: 0xABC),
            produce: { kafka.produce($0, onFailure: $1) }, logger: Logger(label: "test"), wallClock: { 1_000_000 })
    }

    static func request(_ headers: [(name: String, value: String)], tenant: String = "demo", body: [UInt8] = spc) -> EdgeLicenseRoute.Request {
        EdgeLicenseRoute.Request(tenant: tenant, headers: headers, readBody: { .bytes(body) })
    }

    static func ok(_ record: KafkaProducer.Record) -> LicenseReply? {
        guard let job = try? LicenseJob(json: record.value) else { return nil }
        return LicenseReply(id: job.id.value, status: .ok, reason: "", ckc: [0xC, 0xC], rule: "lease:granted")
    }

    @Test func theJobAndItsHeadersAreWhatWorkersRead() async throws {
        let waiters = EdgeReplyWaiters(capacity: 4)
        let kafka = FakeKafka(waiters: waiters, answer: Self.ok)
        let route = Self.route(kafka, deadline: .milliseconds(2_500), classTopics: true)
        let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        let result = await route.answer(
            Self.request([
                ("X-Request-ID", "req-1"), ("X-Account", "acct-9"), ("Authorization", "Bearer tok.en"), ("X-Priority", "continuity"),
                ("traceparent", traceparent),
            ]))
        #expect(result.answer.status == 200)
        #expect(result.answer.body == [0xC, 0xC])
        #expect(result.outcome == .answered && result.tenant == "demo" && result.priority == "continuity" && result.shape == "raw")
        let record = try #require(kafka.records.withLock { $0.first })
        #expect(record.topic == "fps.license.requests.continuity")
        #expect(record.key == Array("demo/acct-9".utf8))
        func header(_ name: String) -> String? { record.headers.first { $0.0 == name }.map { String(decoding: $0.1, as: UTF8.self) } }
        #expect(header("correlation-id") == "0000000000000abc-1")
        #expect(header("reply-topic") == "fps.license.replies.edge.edge-1")
        #expect(header("traceparent") == traceparent)
        let job = try LicenseJob(json: record.value)
        #expect(job.id.value == "req-1" && job.tenant.value == "demo" && job.account.value == "acct-9")
        #expect(job.entitlement == "tok.en" && job.priority == .continuity)
        #expect(job.deadline == Int64(1_002_500))
        #expect(job.spc == Self.spc)
        #expect(waiters.count == 0)
    }

    @Test func withoutHeadersTheJobIsAnonymousNewAndGetsAFreshID() async throws {
        let waiters = EdgeReplyWaiters(capacity: 4)
        let kafka = FakeKafka(waiters: waiters, answer: Self.ok)
        let route = Self.route(kafka)
        _ = await route.answer(Self.request([]))
        _ = await route.answer(Self.request([]))
        let jobs = try kafka.records.withLock { try $0.map { try LicenseJob(json: $0.value) } }
        #expect(jobs.count == 2)
        #expect(jobs.allSatisfy { $0.account.value == "anonymous" && $0.priority == .new && $0.entitlement.isEmpty })
        #expect(jobs[0].id != jobs[1].id)
        #expect(kafka.records.withLock { $0.map(\.topic) } == ["fps.license.requests", "fps.license.requests"])
        // Anonymous requests are keyed by their job ID, so they spread over partitions.
        #expect(kafka.records.withLock { Set($0.compactMap(\.key)).count } == 2)
        #expect(waiters.count == 0)
    }

    @Test func theDeadlineAnswers504AndAtCapacityTheNextIs503AtOnce() async throws {
        let waiters = EdgeReplyWaiters(capacity: 1)
        let sweep = Task { try await waiters.run() }
        defer { sweep.cancel() }
        let kafka = FakeKafka(waiters: waiters)
        let route = Self.route(kafka, deadline: .milliseconds(300))
        async let waiting = route.answer(Self.request([]))
        try await Task.sleep(for: .milliseconds(100))
        let refused = await route.answer(Self.request([]))
        #expect(refused.answer.status == 503 && refused.outcome == .overloaded)
        #expect(refused.answer.retryAfterSeconds == 1)
        let timedOut = await waiting
        #expect(timedOut.answer.status == 504 && timedOut.outcome == .timeout)
        #expect(timedOut.answer.retryAfterSeconds == 1)
        #expect(waiters.count == 0)
        // Only the first was produced.
        #expect(kafka.records.withLock { $0.count } == 1)
    }

    @Test func aJobNotDeliveredIs503AtOnceAndLeavesNoEntry() async {
        let waiters = EdgeReplyWaiters(capacity: 4)
        let kafka = FakeKafka(waiters: waiters, failure: KafkaError(code: .messageTimedOut, message: "test"))
        // No deadline sweep runs, so only the delivery failure can end the wait: an answer at all,
        // and a 503 rather than the deadline's 504, is the failure's.
        let result = await Self.route(kafka).answer(Self.request([]))
        #expect(result.answer.status == 503 && result.outcome == .unavailable)
        #expect(waiters.count == 0)
    }

    @Test func aRequestCancelledBeforeItsJobIsProducedProducesNothing() async {
        let waiters = EdgeReplyWaiters(capacity: 4)
        let kafka = FakeKafka(waiters: waiters, answer: Self.ok)
        let route = Self.route(kafka)
        let result = await Task {
            // As a shutdown out of time cancels the requests still running.
            withUnsafeCurrentTask { $0?.cancel() }
            return await route.answer(Self.request([]))
        }.value
        #expect(result.answer.status == 503 && result.outcome == .unavailable)
        #expect(kafka.records.withLock { $0.isEmpty })
        #expect(waiters.count == 0)
    }

    @Test func aJobTheProducerRefusesIs503AndLeavesNoEntry() async {
        let waiters = EdgeReplyWaiters(capacity: 4)
        let kafka = FakeKafka(waiters: waiters, refusal: KafkaError(code: .queueFull, message: "test"))
        let result = await Self.route(kafka).answer(Self.request([]))
        #expect(result.answer.status == 503 && result.outcome == .unavailable)
        #expect(waiters.count == 0)
    }

    @Test func refusalsBeforeAJobProduceNothing() async {
        struct Closed: EdgeAdmission {
            func admit(_ request: EdgeAdmissionRequest) async -> EdgeAdmissionDecision {
                .refuse(status: 401, reason: "no token", headers: [LicenseHTTPHeader(name: "WWW-Authenticate", value: "Bearer")])
            }
        }
        let waiters = EdgeReplyWaiters(capacity: 4)
        let kafka = FakeKafka(waiters: waiters, answer: Self.ok)
        let closed = await Self.route(kafka, admission: Closed()).answer(Self.request([]))
        #expect(closed.answer.status == 401 && closed.answer.header("WWW-Authenticate") == "Bearer" && closed.tenant == nil)
        let route = Self.route(kafka)
        #expect(await route.answer(Self.request([], tenant: "bad tenant")).answer.status == 404)
        #expect(await route.answer(Self.request([("X-Request-ID", "a b")])).answer.status == 400)
        #expect(await route.answer(Self.request([("X-Priority", "urgent")])).answer.status == 400)
        #expect(await route.answer(Self.request([("X-Account", "a:b")])).answer.status == 400)
        #expect(await route.answer(Self.request([], body: Array("<html>".utf8))).answer.status == 415)
        let tooLarge = EdgeLicenseRoute.Request(tenant: "demo", headers: [], readBody: { .tooLarge })
        #expect(await route.answer(tooLarge).answer.status == 413)
        #expect(kafka.records.withLock { $0.isEmpty })
        #expect(waiters.count == 0)
    }

    @Test func beforeTheEdgeIsReadyARequestIs503AndNothingIsProduced() async {
        let waiters = EdgeReplyWaiters(capacity: 4)
        let kafka = FakeKafka(waiters: waiters, answer: Self.ok)
        let base = Self.route(kafka)
        let route = EdgeLicenseRoute(
            configuration: base.configuration, admission: base.admission, waiters: waiters, correlationIDs: base.correlationIDs,
            produce: base.produce, logger: base.logger, wallClock: base.wallClock, notReadyReason: { "reply topic not yet assigned" })
        let result = await route.answer(Self.request([]))
        #expect(result.answer.status == 503 && result.outcome == .unavailable && result.answer.retryAfterSeconds == 1)
        #expect(String(decoding: result.answer.body, as: UTF8.self).contains("reply topic not yet assigned"))
        #expect(kafka.records.withLock { $0.isEmpty })
        #expect(waiters.count == 0)
    }

    @Test func aRefusalReplyKeepsTheWorkersStatusAndRetryAdvice() async {
        let waiters = EdgeReplyWaiters(capacity: 4)
        let kafka = FakeKafka(waiters: waiters) { record in
            guard let job = try? LicenseJob(json: record.value) else { return nil }
            return LicenseReply(id: job.id.value, status: .storeUnavailable, reason: "redis down", rule: "store", retryAfterMilliseconds: 2_500)
        }
        let result = await Self.route(kafka).answer(Self.request([]))
        #expect(result.answer.status == 503 && result.answer.retryAfterSeconds == 3 && result.outcome == .answered)
        #expect(waiters.count == 0)
    }
}
