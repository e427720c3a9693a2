import FairPlay
import FairPlayDevice
import Foundation
import KSMLoad
import KSMService
import KSMTestSupport
import Kafka
import Licensing
import Testing

/// Priority across the queue: a backlog of new sessions waits in Kafka in front of the
/// continuity requests behind it on the single requests topic, and does not on the class topics.
/// Each run leaves the whole backlog on the broker before its one `ksm serve` starts, with a small
/// in-flight limit and small fetches, so the worker can only reorder what it has fetched.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ClassTopicTests {
    static let joins = 120
    static let continuity = 6

    /// What one run saw: for each continuity reply, how many new-session replies arrived before it.
    struct Outcome {
        var newBeforeEachContinuity: [Int]
        var correct: Int
        var total: Int
        var metrics: String
    }

    @Test("continuity on its class topic is answered ahead of a join backlog; on the single topic it waits behind it")
    func continuityOvertakesJoins() async throws {
        let single = try await Self.run(classTopics: false)
        let classes = try await Self.run(classTopics: true)
        #expect(
            single.correct == single.total && classes.correct == classes.total,
            "single \(single.correct)/\(single.total), classes \(classes.correct)/\(classes.total)")
        let singleLast = try #require(single.newBeforeEachContinuity.max())
        let classesLast = try #require(classes.newBeforeEachContinuity.max())
        print(
            "CLASS-TOPICS new-session replies before each continuity reply: single topic \(single.newBeforeEachContinuity), class topics \(classes.newBeforeEachContinuity) (of \(Self.joins) joins)"
        )
        // The single topic: the last continuity job is fetched only once the joins ahead of it in
        // its partition were; the class topics: fetched at once, answered within a few batches.
        #expect(singleLast >= Self.joins / 2, "single topic: continuity answered after \(single.newBeforeEachContinuity) joins")
        #expect(classesLast <= Self.joins / 4, "class topics: continuity answered after \(classes.newBeforeEachContinuity) joins")
        // The lag per class is exported (sampled every 2 s while the worker owns the topics).
        #expect(classes.metrics.contains("ksm_consumer_lag_by_class{class=\"continuity\"}"), "\(classes.metrics.suffix(3000))")
        #expect(classes.metrics.contains("ksm_consumer_lag_by_class{class=\"new\"}"))
    }

    /// Sends the joins, then the continuity jobs (to the requests topic, or each to its class topic,
    /// plus one job on the requests topic that must still be answered), then starts the worker.
    static func run(classTopics: Bool) async throws -> Outcome {
        let fleet = try await Fleet(maxStreams: 4)
        let client = try await FleetClient(fleet: fleet)
        var sessions: [String: DeviceSession] = [:]
        var order: [(id: String, priority: LicenseJob.Priority, legacy: Bool)] = []
        for index in 0..<(joins + continuity + (classTopics ? 1 : 0)) {
            let priority: LicenseJob.Priority = index < joins ? .new : .continuity
            let legacy = index == joins + continuity
            let id = "\(priority.rawValue)-\(index)"
            let account = "acct-\(index)"
            var options = SPCOptions()
            options.assetID = Array(fleet.catalog.assetID(stream: index % 2, period: 0).utf8)
            options.playback = MediaPlaybackInfo(creationDate: UInt32(Date().timeIntervalSince1970), state: .readyToPlay, sessionID: UInt64(index + 1))
            let (spc, session) = try SimulatedDevice(trust: client.trust).makeSPC(options)
            sessions[id] = session
            let job = LicenseJob(
                id: try StoreIdentifier(id), tenant: try StoreIdentifier(fleet.catalog.tenant), account: try StoreIdentifier(account),
                spc: spc, priority: priority)
            let topic = classTopics && !legacy ? RequestTopics.topic(for: priority, requestsTopic: "fps.license.requests") : "fps.license.requests"
            _ = try await client.producer.send(topic: topic, key: Array(account.utf8), value: job.jsonBytes(), headers: [("correlation-id", Array(id.utf8))])
            order.append((id, priority, legacy))
        }
        let worker = try await fleet.startWorker(
            extraArguments: [
                "--max-in-flight", "24", "--max-batch-size", "4", "--concurrent-batches", "1", "--crypto-threads", "1",
                "--kafka-property", "max.partition.fetch.bytes=4096", "--kafka-property", "queued.min.messages=1",
            ] + (classTopics ? ["--class-topics"] : []))
        var correct = 0
        for job in order {
            let reply = try await client.reply(job.id, timeout: .seconds(60))
            if reply.status == .ok, let ckc = reply.ckc, let session = sessions[job.id],
                (try? CKCOpener.open(ckc, session: session)) != nil
            {
                correct += 1
            }
        }
        // Arrival order on the reply topic, as the edge sees it.
        var newSoFar = 0
        var before: [Int] = []
        for message in client.messages(on: "fps.license.replies") {
            let id = String(decoding: message.header("correlation-id") ?? [], as: UTF8.self)
            if id.hasPrefix("new-") {
                newSoFar += 1
            } else if id.hasPrefix("continuity-"), !(order.last?.legacy == true && order.last?.id == id) {
                before.append(newSoFar)
            }
        }
        let metrics =
            classTopics ? try await FleetTests.scrape(port: worker.adminPort ?? 0) { $0.contains("ksm_consumer_lag_by_class{class=\"continuity\"}") } : ""
        #expect(await worker.terminate() == 0, "\(worker.stderr.suffix(2000))")
        await client.close()
        return Outcome(newBeforeEachContinuity: before, correct: correct, total: order.count, metrics: metrics)
    }
}
