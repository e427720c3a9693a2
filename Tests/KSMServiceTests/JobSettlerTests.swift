import Kafka
import Synchronization
import Testing

@testable import KSMService

/// Settling: offsets stored as each publish round delivers, never for what was not delivered.
@Suite("Job settler")
struct JobSettlerTests {
    let p0 = TopicPartition(topic: "jobs", partition: 0)

    func messages(_ offsets: Range<Int64>) -> [KafkaMessage] {
        offsets.map { KafkaMessage(topic: p0.topic, partition: p0.partition, offset: $0, key: nil, value: Array("{}".utf8), headers: []) }
    }

    func batch(_ jobs: Int) -> JobSettler.Batch {
        JobSettler.Batch(jobs: jobs, perClass: ["new": jobs], batchClass: "new", processing: .milliseconds(5), spans: [])
    }

    @Test("a round's delivered jobs store their offset at once, before the rest of their batch settles")
    func deliveredRoundStoresAtOnce() async {
        let stored = Mutex<[Int64]>([])
        let state = WorkerState(maximumInFlight: 100, storeOffset: { _, offset in stored.withLock { $0.append(offset) } })
        let settler = JobSettler(state: state, statistics: WorkerStatistics(tenantLabelLimit: 5))
        _ = await state.assigned([p0])
        await state.enqueue(messages(0..<4))
        let taken = await state.nextBatch(limit: 4) ?? []
        await state.processed(jobs: taken.count, in: .milliseconds(5))
        // The first round delivered offsets 0 and 1; 2 and 3 wait for a retry.
        await settler.settle(taken.prefix(2).map(\.message))
        #expect(stored.withLock { $0 } == [1], "the last of the contiguous delivered offsets 0 and 1")
        #expect(await state.inFlight == 2)
    }

    @Test("a batch ended by shutdown releases its undelivered jobs from the in-flight count without storing their offsets")
    func finishReleasesUndelivered() async {
        let stored = Mutex<[Int64]>([])
        let state = WorkerState(maximumInFlight: 100, storeOffset: { _, offset in stored.withLock { $0.append(offset) } })
        let statistics = WorkerStatistics(tenantLabelLimit: 5)
        statistics.update { $0.processingByClass["new"] = 3 }
        let settler = JobSettler(state: state, statistics: statistics)
        _ = await state.assigned([p0])
        await state.enqueue(messages(0..<3))
        let taken = await state.nextBatch(limit: 3) ?? []
        await state.processed(jobs: taken.count, in: .milliseconds(5))
        await settler.settle([taken[0].message])
        await settler.finish(batch(3), settled: 1)
        #expect(stored.withLock { $0 } == [0], "only the delivered job's offset")
        #expect(statistics.snapshot.processingByClass["new"] == 0)
        #expect(statistics.snapshot.batchLatency["new"]?.count == 1)
        // The tracker still holds 1 and 2 unfinished: their partition's next owner answers them.
        #expect(await state.inFlight == 2)
    }
}
