import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import KSMTestSupport
import Licensing
import Testing
import Wire

/// A live stream's key rotation from the packager's side to the device's, with the real binaries:
/// a SPEKE v2.1 request for three key periods with start and end times (FairPlay, cbcs, an HD video
/// key and an audio key per period) answered by `ksm speke`; the rotation schedules it writes read
/// back with `ksm admin rotations`; and, through Kafka, a simulated device asking `ksm serve` for
/// each period's key with the answered URI's asset ID, its CKC opening to the key and IV the
/// packager received, with the next boundary advertised in the reply before it comes.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct SpekeRotationTests {
    /// One key period of the request: its CPIX ID, start and end (ms since 1970), and its two KIDs.
    struct Period {
        var id: String
        var index: Int64
        var start: Int64
        var end: Int64
        var videoKID: String
        var audioKID: String
    }

    /// Three consecutive 120 s periods, the first started 10 s ago, indexed as a live packager counts
    /// them (periods since its epoch). The worker runs with a 300 s prefetch window closing 1 s before
    /// each boundary, so both boundaries fall inside its advice horizon (rotation lead 30 s + window
    /// + margin) and the first window stays open for 109 s: the answers below arrive long before,
    /// however slowly a crowded host starts the fleet.
    static func periods(now: Int64) -> [Period] {
        let first = (now / 1_000) * 1_000 - 10_000
        return (0..<3).map { index in
            let start = first + Int64(index) * 120_000
            return Period(
                id: "keyPeriod_\(index)", index: start / 120_000, start: start, end: start + 120_000, videoKID: "6a1a0c8e-0000-4c1d-8f00-00000000010\(index)",
                audioKID: "6a1a0c8e-0000-4c1d-8f00-00000000020\(index)")
        }
    }

    /// The SPEKE v2.1 (CPIX 2.4) request a live packager sends with key rotation and period times
    /// (MediaPackage's `INDEX_WITH_START_END` timing): a key per track per period, each named by a
    /// `KeyPeriodFilter`.
    static func request(contentID: String, periods: [Period]) -> String {
        let time = ISO8601DateFormatter()
        func date(_ ms: Int64) -> String { time.string(from: Date(timeIntervalSince1970: Double(ms) / 1_000)) }
        let kids = periods.flatMap { [$0.videoKID, $0.audioKID] }
        let keys = kids.map { #"<cpix:ContentKey kid="\#($0)" commonEncryptionScheme="cbcs"/>"# }.joined()
        let systems = kids.map {
            #"<cpix:DRMSystem kid="\#($0)" systemId="94ce86fb-07ff-4f43-adb8-93d2fa968ca2"><cpix:HLSSignalingData playlist="media"/><cpix:HLSSignalingData playlist="master"/></cpix:DRMSystem>"#
        }.joined()
        let periodList = periods.map { period in
            #"<cpix:ContentKeyPeriod id="\#(period.id)" index="\#(period.index)" start="\#(date(period.start))" end="\#(date(period.end))"/>"#
        }.joined()
        let rules = periods.map { period in
            #"<cpix:ContentKeyUsageRule kid="\#(period.videoKID)" intendedTrackType="HD"><cpix:KeyPeriodFilter periodId="\#(period.id)"/><cpix:VideoFilter/></cpix:ContentKeyUsageRule>"#
                + #"<cpix:ContentKeyUsageRule kid="\#(period.audioKID)" intendedTrackType="AUDIO"><cpix:KeyPeriodFilter periodId="\#(period.id)"/><cpix:AudioFilter/></cpix:ContentKeyUsageRule>"#
        }.joined()
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <cpix:CPIX contentId="\(contentID)" version="2.4" xmlns:cpix="urn:dashif:org:cpix" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc">
            <cpix:ContentKeyList>\(keys)</cpix:ContentKeyList>
            <cpix:DRMSystemList>\(systems)</cpix:DRMSystemList>
            <cpix:ContentKeyPeriodList>\(periodList)</cpix:ContentKeyPeriodList>
            <cpix:ContentKeyUsageRuleList>\(rules)</cpix:ContentKeyUsageRuleList>
            </cpix:CPIX>
            """
    }

    @Test("a SPEKE v2.1 request for three key periods: the packager's keys open in ksm serve's CKCs and the workers advertise each next boundary")
    func threeKeyPeriodsReachTheDeviceWithTheirBoundaries() async throws {
        let fleet = try await Fleet(streams: 1, periods: 1)
        let created = try await KSMBinary.run(["admin", "put-packager-credential", "--redis-url", fleet.redisURL, "--tenant", fleet.catalog.tenant])
        #expect(created.status == 0)
        let token = try #require(String(decoding: created.stdout, as: UTF8.self).split(separator: "\n").last.map(String.init))
        let (speke, port) = try await SpekeServiceTests.startSpeke(redisURL: fleet.redisURL, kekPath: fleet.kekPath)
        defer { speke.kill() }

        let periods = Self.periods(now: LicenseProcessor.currentTimeMilliseconds())
        let body = Array(Self.request(contentID: "live-event-1", periods: periods).utf8)
        let answer = try await HTTPExchange.post(
            "http://127.0.0.1:\(port)/speke/v2/\(fleet.catalog.tenant)/copyProtection", body: body,
            headers: ["Authorization": "Bearer \(token)", "X-Speke-Version": "2.1"])
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.headers["x-speke-version"] == "2.1")
        let keys = try SpekeServiceTests.fairPlayKeys(answer.body)
        try #require(keys.count == 6)
        let byKID = Dictionary(uniqueKeysWithValues: keys.map { ($0.kid, $0) })
        for (index, period) in periods.enumerated() {
            for kid in [period.videoKID, period.audioKID] {
                let key = try #require(byKID[kid])
                let hex = kid.replacingOccurrences(of: "-", with: "")
                // Named by the period's index: SPEKE tracks a period by its index, not its document-local ID.
                #expect(key.uri == "skd://live-event-1/\(period.index)/\(hex)", "period \(index)")
            }
        }
        // The answer against the DASH-IF CPIX schema: valid. The independent reader refuses only
        // what CPIX 2.3 forbids and SPEKE v2.1 sends, an index together with start and end.
        let report = try #require(try await CPIXSchemaCheck.check([(name: "answer", bytes: answer.body)])["answer"])
        #expect(report.problems.allSatisfy { $0.hasPrefix("reader:") && $0.contains("mutually exclusive") }, "\(report.problems)")
        // The same request again answers the same keys (set-if-absent, or the seed's derivation).
        let again = try await HTTPExchange.post(
            "http://127.0.0.1:\(port)/speke/v2/\(fleet.catalog.tenant)/copyProtection", body: body,
            headers: ["Authorization": "Bearer \(token)", "X-Speke-Version": "2.1"])
        #expect(try SpekeServiceTests.fairPlayKeys(again.body) == keys)

        // The schedules the provider wrote: each track's key of one period to the next, at the next period's start.
        let listed = try await KSMBinary.run(["admin", "rotations", "--redis-url", fleet.redisURL])
        #expect(listed.status == 0)
        let listing = try JSONSerialization.jsonObject(with: Data(listed.stdout)) as? [String: Any]
        let rows = try #require(listing?["rotations"] as? [[String: Any]])
        var schedules: [String: (next: String, boundary: Int64)] = [:]
        for row in rows {
            let asset = try #require(row["asset"] as? String)
            let next = try #require(row["next-asset"] as? String)
            let boundary = try #require(row["boundary"] as? Int)
            schedules[asset] = (next, Int64(boundary))
        }
        #expect(schedules.count == 4, "\(rows)")
        for (current, next) in zip(periods, periods.dropFirst()) {
            for (kid, nextKID) in [(current.videoKID, next.videoKID), (current.audioKID, next.audioKID)] {
                let currentURI = try #require(byKID[kid]).uri
                let schedule = try #require(schedules[currentURI], "no schedule from \(kid)")
                #expect(schedule.next == byKID[nextKID]?.uri)
                #expect(schedule.boundary == next.start)
            }
        }

        // The worker starts after the schedules exist; its first prefetch pass reads them.
        try await fleet.startWorker(extraArguments: ["--rotation-interval", "1", "--prefetch-window", "300", "--prefetch-margin", "1"])
        let client = try await FleetClient(fleet: fleet)
        let device = SimulatedDevice(trust: client.trust)
        for (index, period) in periods.enumerated() {
            for (kid, isVideo) in [(period.videoKID, true), (period.audioKID, false)] {
                let key = try #require(byKID[kid])
                var options = SPCOptions()
                options.assetID = Array(key.uri.utf8)
                // One playback session across tracks and periods, as one player watching the stream:
                // it holds one lease slot.
                options.playback = MediaPlaybackInfo(creationDate: UInt32(Date().timeIntervalSince1970), state: .readyToPlay, sessionID: 7)
                let (spc, session) = try device.makeSPC(options)
                let id = "rotation-\(index)-\(isVideo ? "video" : "audio")"
                let job = LicenseJob(
                    id: try StoreIdentifier(id), tenant: try StoreIdentifier(fleet.catalog.tenant), account: try StoreIdentifier("viewer"), spc: spc)
                try await client.sendRaw(job.jsonBytes(), key: "viewer", headers: [("correlation-id", Array(id.utf8))])
                let reply = try await client.reply(id)
                try #require(reply.status == .ok, "\(id): \(reply.reason)")
                let opened = try CKCOpener.open(try #require(reply.ckc), session: session)
                #expect(opened.contentKey == key.key, "\(id)")
                #expect(opened.contentIV == key.iv, "\(id)")
                // The track type set the content type: HD video asks for HDCP, audio for the audio level.
                if isVideo {
                    #expect(opened.hdcp == .type0, "\(id)")
                } else {
                    #expect(opened.requiredSecurityLevel == .audio, "\(id)")
                }
                if index + 1 < periods.count {
                    let advice = try #require(reply.nextKey, "\(id): no next-key before the boundary at \(periods[index + 1].start)")
                    #expect(advice.boundaryMilliseconds == periods[index + 1].start, "\(id)")
                    #expect(advice.fetchAtMilliseconds < periods[index + 1].start, "\(id)")
                } else {
                    #expect(reply.nextKey == nil, "\(id): the last period has no next key")
                }
            }
        }
        await client.close()
    }
}
