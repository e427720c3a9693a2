import Kafka
import Testing

@testable import KSMService
@testable import Kafka

/// One publishing round judged from its delivery reports: what settles, what goes again, what is counted.
@Suite("Publish round")
struct PublishRoundTests {
    static func job(_ offset: Int64, _ outcome: JobOutcome) -> PendingReply {
        PendingReply(
            message: KafkaMessage(topic: "jobs", partition: 0, offset: offset, key: nil, value: Array("{}".utf8), headers: []),
            outcome: outcome, priority: "new", arrived: .now, span: nil)
    }

    static func reply(_ id: String, _ status: KSMStatus = .ok) -> JobOutcome {
        .reply(LicenseReply(id: id, status: status, reason: "", tenant: "acme", account: "a", rule: ""))
    }

    static let delivered: Result<KafkaDeliveryReport, KafkaError> = .success(KafkaDeliveryReport(topic: "replies", partition: 0, offset: 1))
    static let unavailable = KafkaError(code: .leaderNotAvailable, message: "leader gone")
    static let tooLarge = KafkaError(code: .messageSizeTooLarge, message: "too large")

    @Test("a delivered answer settles; a retriable failure is sent again as it was and asks for a backoff")
    func deliveredSettlesRetriableGoesAgain() {
        let jobs = [Self.job(0, Self.reply("a")), Self.job(1, Self.reply("b"))]
        let round = PublishRound(judging: jobs, results: [Self.delivered, .failure(Self.unavailable)])
        #expect(round.settled.map(\.offset) == [0])
        #expect(round.again.map(\.message.offset) == [1])
        #expect(round.retriableError?.code == .leaderNotAvailable)
        guard case .reply(let again) = round.again.first?.outcome else {
            Issue.record("the retried answer is no longer the reply")
            return
        }
        #expect(again.id == "b")
    }

    @Test("a reply refused for good falls back to a headers-only dead letter naming the job, sent at once and not yet settled")
    func refusedReplyFallsBack() {
        let round = PublishRound(judging: [Self.job(7, Self.reply("job-7"))], results: [.failure(Self.tooLarge)])
        #expect(round.settled.isEmpty)
        #expect(round.retriableError == nil, "a fallback waits for no backoff")
        #expect(round.fellBack.count == 1)
        guard case .deadLetterHeadersOnly(_, let jobID) = round.again.first?.outcome else {
            Issue.record("no headers-only dead letter")
            return
        }
        #expect(jobID == "job-7")
    }

    @Test("a headers-only dead letter refused for good is dropped and settles, so its offset moves on")
    func refusedHeadersOnlyIsDropped() {
        let round = PublishRound(
            judging: [Self.job(3, .deadLetterHeadersOnly(reason: "x", jobID: nil))], results: [.failure(Self.tooLarge)])
        #expect(round.again.isEmpty)
        #expect(round.dropped.count == 1)
        #expect(round.settled.map(\.offset) == [3])
    }

    @Test("a cancelled delivery wait neither settles nor goes again: the job is redelivered")
    func cancelledWaitIsAbandoned() {
        let round = PublishRound(judging: [Self.job(4, Self.reply("c"))], results: [.failure(KafkaError.deliveryWaitCancelled())])
        #expect(round.settled.isEmpty)
        #expect(round.again.isEmpty)
        #expect(round.abandoned == 1)
        #expect(round.failedKinds.isEmpty, "a cancelled wait is no Kafka error")
    }

    @Test("the round's counts: replies by status, dead letters, retries and producer errors")
    func countsTheRound() {
        let jobs = [Self.job(0, Self.reply("a")), Self.job(1, .deadLetter(reason: "junk")), Self.job(2, Self.reply("b"))]
        let round = PublishRound(judging: jobs, results: [Self.delivered, Self.delivered, .failure(Self.unavailable)])
        var s = WorkerStatistics(tenantLabelLimit: 5).snapshot
        round.count(into: &s, deliveredAt: .now)
        #expect(s.replied == 1)
        #expect(s.deadLettered == 1)
        #expect(s.repliesByStatus[KSMStatus.ok.name] == 1)
        #expect(s.publishRetries == 1)
        #expect(s.endToEndLatency["new"]?.count == 2)
        #expect(s.kafkaErrors.values.reduce(0, +) == 1)
    }
}
