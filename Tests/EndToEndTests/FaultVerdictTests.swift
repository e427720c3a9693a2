import FairPlayDevice
import KSMService
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
    static func arrival(_ reply: LicenseReply, partition: Int32 = 0, offset: Int64 = 0) throws -> FaultLoad.Arrival {
        let bytes = reply.jsonBytes()
        return FaultLoad.Arrival(bytes: bytes, reply: try LicenseReply(json: bytes), at: .now, partition: partition, offset: offset)
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
            "shed": [try Self.arrival(LicenseReply(id: "shed", status: .overloaded, reason: "worker overloaded", rule: "schedule:shed-new", retryAfterMilliseconds: 900))],
            "rate": [try Self.arrival(LicenseReply(id: "rate", status: .rateLimited, reason: "too many", rule: "rate:limited", retryAfterMilliseconds: 400))],
            "store": [try Self.arrival(LicenseReply(id: "store", status: .storeUnavailable, reason: "down", rule: "store:unavailable", retryAfterMilliseconds: 1_500))],
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
}
