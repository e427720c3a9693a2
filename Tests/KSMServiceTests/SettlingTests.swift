import Kafka
import Licensing
import Synchronization
import Testing

@testable import KSMService

/// Jobs between their answer and their delivery reports (held by a batch's settling task): still in
/// flight for the in-flight limit, revoked partitions or not, but no longer work ahead for shedding.
@Suite("Settling jobs")
struct SettlingTests {
    let p0 = TopicPartition(topic: "jobs", partition: 0)

    func messages(_ offsets: Range<Int64>) -> [KafkaMessage] {
        offsets.map { KafkaMessage(topic: p0.topic, partition: p0.partition, offset: $0, key: nil, value: Array("{}".utf8), headers: []) }
    }

    @Test("answered jobs waiting for delivery stay in flight until settled, even after their partition is revoked")
    func unsettledJobsStayInFlight() async {
        let state = WorkerState(maximumInFlight: 1_000)
        _ = await state.assigned([p0])
        _ = await state.enqueue(messages(0..<10))
        let batch = await state.nextBatch(limit: 10) ?? []
        #expect(batch.count == 10)
        await state.processed(jobs: batch.count, in: .milliseconds(10))
        #expect(await state.inFlight == 10)
        // The partition goes to another worker while the batch waits for its delivery reports.
        await state.revoke([p0])
        #expect(await state.inFlight == 10, "a revocation must not free room that a settling task still holds")
        let store = await state.finished(batch.map(\.message), settled: batch.count)
        #expect(store.isEmpty, "no offset is stored for a revoked partition")
        #expect(await state.inFlight == 0)
    }

    @Test("only jobs taken and not yet answered count as work ahead of a new arrival, not those waiting for delivery")
    func settlingJobsAreNotWorkAhead() async {
        // A rate of 100 jobs a second and prefetch's 1 s limit: more than about 100 jobs ahead sheds it.
        var policy = SchedulingPolicy()
        policy.initialRate = 100
        let state = WorkerState(maximumInFlight: 10_000, policy: policy)
        _ = await state.assigned([p0])
        _ = await state.enqueue(messages(0..<500))
        let batch = await state.nextBatch(limit: 500) ?? []
        await state.processed(jobs: batch.count, in: .seconds(5))
        // 500 answered jobs wait for their delivery reports; a prefetch job arrives.
        let prefetch = LicenseJob(
            id: try! StoreIdentifier("p"), tenant: try! StoreIdentifier("t"), account: try! StoreIdentifier("a"),
            spc: [1, 2, 3], priority: .prefetch)
        _ = await state.enqueue([KafkaMessage(topic: p0.topic, partition: p0.partition, offset: 500, key: nil, value: prefetch.jsonBytes(), headers: [])])
        let next = await state.nextBatch(limit: 10) ?? []
        #expect(next.count == 1)
        #expect(next.first?.retryAfterMilliseconds == nil, "a prefetch job was shed for work that needs no more processing")
    }
}

extension SettlingTests {
    @Test("offsets are stored from inside the state, only forward, whatever order the settling tasks finish in")
    func offsetsStoredForwardInOrder() async {
        let stored = Mutex<[Int64]>([])
        let state = WorkerState(maximumInFlight: 1_000, storeOffset: { _, offset in stored.withLock { $0.append(offset) } })
        _ = await state.assigned([p0])
        let all = messages(0..<30)
        _ = await state.enqueue(all)
        _ = await state.nextBatch(limit: 30)
        await state.processed(jobs: 30, in: .milliseconds(10))
        // Three batches settle in reverse order: nothing is stored until the first arrives.
        await state.finished(Array(all[20..<30]), settled: 10)
        await state.finished(Array(all[10..<20]), settled: 10)
        #expect(stored.withLock { $0 }.isEmpty)
        await state.finished(Array(all[0..<10]), settled: 10)
        #expect(stored.withLock { $0 } == [29])
        #expect(await state.inFlight == 0)
    }
}
