import FairPlayDevice
import KSMService
import Kafka
import Testing

/// The fault suite's verdict rules on hand-made arrivals (no fleet, no binary): what counts as
/// "a retriable reply carried a license".
///
/// Until 74d7795 the rule was `ckc != nil || status != .storeUnavailable`, written when
/// `storeUnavailable` was the only retriable status. Once the scheduler shed jobs (`overloaded`,
/// retriable, never a CKC), a job shed in the backlog after the broker came back read as
/// "1 retriable replies (1 with a CKC)": a harness fault, not a license on a retriable reply.
@Suite("Fault suite verdict")
struct FaultVerdictTests {
    /// A job of the load (the device session is never used: no final answer is opened here).
    static func job(_ id: String) -> FaultLoad.Job {
        let session = DeviceSession(sessionKey: [], hu: [], r1: [], antiReplaySeed: [], assetID: [], requestedBlocks: [:], capabilities: nil)
        return FaultLoad.Job(id: id, account: "acct-\(id)", bytes: [], session: session, expectedKey: [], firstSent: .now)
    }

    /// A reply as the client reads it: through its bytes, as on the reply topic.
    static func arrival(_ reply: LicenseReply, partition: Int32 = 0, offset: Int64 = 0, producedAt: Int64? = nil, marked: Bool = false) throws
        -> FaultLoad.Arrival
    {
        let bytes = reply.jsonBytes()
        return FaultLoad.Arrival(
            bytes: bytes, reply: try LicenseReply(json: bytes), at: .now, markedDuplicate: marked,
            partition: partition, offset: offset, producedAt: producedAt)
    }

    static func state(_ arrivals: [String: [FaultLoad.Arrival]]) -> FaultLoad.State {
        var state = FaultLoad.State()
        for id in arrivals.keys.sorted() {
            state.jobs[id] = job(id)
            state.order.append(id)
            state.arrivals[id] = arrivals[id]
        }
        return state
    }

    @Test("a shed, rate-limited or store-unavailable reply without a CKC is retriable, not a license")
    func retriableRepliesWithoutCKC() throws {
        let state = Self.state([
            "shed": [
                try Self.arrival(
                    LicenseReply(id: "shed", status: .overloaded, reason: "worker overloaded", rule: "schedule:shed-new", retryAfterMilliseconds: 900))
            ],
            "rate": [try Self.arrival(LicenseReply(id: "rate", status: .rateLimited, reason: "too many", rule: "rate:limited", retryAfterMilliseconds: 400))],
            "store": [
                try Self.arrival(LicenseReply(id: "store", status: .storeUnavailable, reason: "down", rule: "store:unavailable", retryAfterMilliseconds: 1_500))
            ],
        ])
        let verdict = FaultLoad.verdict(of: state)
        #expect(verdict.retriable == 3)
        #expect(verdict.retriableWithCKC == 0, "\(verdict)")
        #expect(verdict.retriableByStatus == ["overloaded": 1, "rateLimited": 1, "storeUnavailable": 1])
        #expect(verdict.description.contains("3 retriable replies [overloaded: 1, rateLimited: 1, storeUnavailable: 1] (0 with a CKC"), "\(verdict)")
        // No final answer arrived for any of them: missing, which the suite reports on its own.
        #expect(verdict.missing.sorted() == ["rate", "shed", "store"])
    }

    @Test("a retriable reply that does carry a CKC is caught and named by its record")
    func retriableReplyWithCKC() throws {
        var forged = LicenseReply(id: "bad", status: .overloaded, reason: "r", rule: "schedule:shed-new", retryAfterMilliseconds: 900)
        forged.ckc = [1, 2, 3]
        let state = Self.state(["bad": [try Self.arrival(forged, partition: 4, offset: 17)]])
        let verdict = FaultLoad.verdict(of: state)
        #expect(verdict.retriableWithCKC == 1)
        #expect(verdict.retriableWithCKCEvidence == ["bad overloaded rule schedule:shed-new ckc 3 bytes at 4/17"])
    }

    @Test(
        "unmarked copies alike in bytes, partition and producer timestamp look like one record written twice; a new timestamp, partition or body is another record"
    )
    func producerResendsAreOneRecord() throws {
        let ok = LicenseReply(id: "j", status: .ok, reason: "", rule: "r", retryAfterMilliseconds: nil)
        let first = try Self.arrival(ok, partition: 2, offset: 10, producedAt: 1_000)
        let resent = try Self.arrival(ok, partition: 2, offset: 25, producedAt: 1_000)
        #expect(FaultLoad.producedRecords([first, resent]) == 1)
        #expect(FaultLoad.producedRecords([first, resent, try Self.arrival(ok, partition: 2, offset: 26, producedAt: 1_000)]) == 1)
        // Published again by a worker: a new produce call, a new timestamp.
        #expect(FaultLoad.producedRecords([first, try Self.arrival(ok, partition: 2, offset: 30, producedAt: 1_007)]) == 2)
        #expect(FaultLoad.producedRecords([first, try Self.arrival(ok, partition: 3, offset: 10, producedAt: 1_000)]) == 2)
        var other = ok
        other.reason = "another body"
        #expect(FaultLoad.producedRecords([first, try Self.arrival(other, partition: 2, offset: 11, producedAt: 1_000)]) == 2)
        // Without timestamps nothing can be told apart: every copy is a record of its own.
        #expect(FaultLoad.producedRecords([try Self.arrival(ok, offset: 1), try Self.arrival(ok, offset: 2)]) == 2)
    }

    @Test("a reply-topic record that is no reply is counted once and fails the verdict; a reply read twice counts once")
    func undecodableRecordsFailTheVerdict() throws {
        var state = Self.state([:])
        state.jobs["j"] = Self.job("j")
        state.order.append("j")
        let reply = LicenseReply(id: "j", status: .storeUnavailable, reason: "down", rule: "store:unavailable", retryAfterMilliseconds: 1_500)
        let now = ContinuousClock.now
        for offset: Int64 in [3, 3] {
            state.receive(
                KafkaMessage(topic: "fps.license.replies", partition: 1, offset: offset, key: nil, value: reply.jsonBytes(), headers: []),
                at: now, honoursRetryAfter: true)
        }
        // Read twice (the reader's consumer after a broker outage): one record.
        for _ in 0..<2 {
            state.receive(
                KafkaMessage(topic: "fps.license.replies", partition: 2, offset: 9, key: nil, value: Array("{\"id\":".utf8), headers: []),
                at: now, honoursRetryAfter: true)
        }
        #expect(state.arrivals["j"]?.count == 1)
        // The job is due again after its reply's retry-after, not after the fixed 200 ms.
        #expect(state.retryDue["j"] == now + .milliseconds(1_500))
        #expect(state.undecodable == ["2/9 (6 bytes)"])
        let verdict = FaultLoad.verdict(of: state)
        #expect(verdict.undecodable.count == 1)
        #expect(verdict.description.contains("1 undecodable records [\"2/9 (6 bytes)\"]"), "\(verdict)")
    }
}
