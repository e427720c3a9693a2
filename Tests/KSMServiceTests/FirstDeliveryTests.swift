import Kafka
import Testing

@testable import KSMService

/// Which messages a worker may treat as first deliveries (no stored-reply lookup): those at or past
/// the log end their partition had when this worker was assigned it, and only for that assignment.
@Suite("First deliveries")
struct FirstDeliveryTests {
    let p0 = TopicPartition(topic: "jobs", partition: 0)
    let p1 = TopicPartition(topic: "jobs", partition: 1)

    func message(_ partition: TopicPartition, _ offset: Int64) -> KafkaMessage {
        KafkaMessage(topic: partition.topic, partition: partition.partition, offset: offset, key: nil, value: Array("{}".utf8), headers: [])
    }

    /// Queues the messages and returns, per (partition, offset), whether it was a first delivery.
    func firstDeliveries(_ state: WorkerState, _ messages: [KafkaMessage]) async -> [String: Bool] {
        _ = await state.enqueue(messages)
        let batch = await state.nextBatch(limit: 100) ?? []
        return Dictionary(uniqueKeysWithValues: batch.map { ("\($0.message.partition)@\($0.message.offset)", $0.firstDelivery) })
    }

    @Test("a message is a first delivery only at or past its partition's log end at assignment, once that is known")
    func pastTheLogEndAtAssignment() async {
        let state = WorkerState(maximumInFlight: 1_000)
        let tokens = await state.assigned([p0, p1])
        // Before the broker answered nothing is assumed.
        #expect(await firstDeliveries(state, [message(p0, 7)]) == ["0@7": false])
        await state.recordLogEnds([p0: 5], generations: tokens)
        let seen = await firstDeliveries(state, [message(p0, 4), message(p0, 5), message(p0, 9), message(p1, 9)])
        #expect(seen == ["0@4": false, "0@5": true, "0@9": true, "1@9": false])
    }

    @Test("a log end asked for an earlier assignment is never recorded for a later one, nor kept past a revocation")
    func staleLogEndsAreIgnored() async {
        let state = WorkerState(maximumInFlight: 1_000)
        let first = await state.assigned([p0])
        await state.revoke([p0])
        // The answer for the first assignment arrives after the revocation: ignored.
        await state.recordLogEnds([p0: 0], generations: first)
        #expect(await firstDeliveries(state, [message(p0, 3)]) == ["0@3": false])

        let second = await state.assigned([p0])
        await state.recordLogEnds([p0: 0], generations: first)
        #expect(await firstDeliveries(state, [message(p0, 4)]) == ["0@4": false])
        await state.recordLogEnds([p0: 4], generations: second)
        #expect(await firstDeliveries(state, [message(p0, 5)]) == ["0@5": true])

        // Revoked: what was known about the partition goes with it.
        await state.revoke([p0])
        #expect(await firstDeliveries(state, [message(p0, 6)]) == ["0@6": false])
    }
}
