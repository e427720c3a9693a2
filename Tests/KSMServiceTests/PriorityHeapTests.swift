import KSMTestSupport
import Testing

@testable import KSMService

@Suite("Priority heap")
struct PriorityHeapTests {
    /// An element with a reference inside, so a move that lost or doubled a reference would show
    /// as a wrong payload or a crash, not only as a wrong order.
    struct Item: HeapOrdered, Sendable {
        final class Payload: Sendable {
            let value: Int
            init(_ value: Int) { self.value = value }
        }
        let key: Int
        let sequence: Int
        let payload: Payload
        var heapKey: HeapKeyPair { HeapKeyPair(key: key, sequence: sequence) }
    }

    struct HeapKeyPair: Comparable, Sendable {
        let key: Int
        let sequence: Int
        static func < (a: Self, b: Self) -> Bool { (a.key, a.sequence) < (b.key, b.sequence) }
    }

    @Test("Pops come out in key order, ties by arrival, across interleaved pushes and pops (20 random histories against a sorted list)")
    func popsInKeyOrder() {
        for seed in UInt64(1)...20 {
            // Seeded, so a failing history can be replayed from the seed in the expectation's message.
            var random = SplitMix64(state: seed)
            var heap = PriorityHeap<Item>()
            var model: [Item] = []
            var sequence = 0
            for _ in 0..<2_000 {
                if Int.random(in: 0..<3, using: &random) < 2 || model.isEmpty {
                    let item = Item(key: Int.random(in: 0..<50, using: &random), sequence: sequence, payload: .init(sequence))
                    sequence += 1
                    heap.push(item)
                    model.append(item)
                } else {
                    model.sort { $0.heapKey < $1.heapKey }
                    let expected = model.removeFirst()
                    let popped = heap.pop()
                    #expect(popped?.sequence == expected.sequence, "seed \(seed)")
                    #expect(popped?.payload.value == expected.sequence, "seed \(seed)")
                }
                #expect(heap.count == model.count)
            }
            model.sort { $0.heapKey < $1.heapKey }
            var drained: [Int] = []
            while let item = heap.pop() { drained.append(item.payload.value) }
            #expect(drained == model.map(\.sequence), "seed \(seed)")
            #expect(heap.isEmpty && heap.pop() == nil)
        }
    }

    @Test("filter keeps exactly the elements asked for, still in key order")
    func filterKeepsOrder() {
        var heap = PriorityHeap<Item>()
        for i in 0..<500 { heap.push(Item(key: (i * 7919) % 101, sequence: i, payload: .init(i))) }
        heap.filter { $0.sequence % 3 != 0 }
        var popped: [Item] = []
        while let item = heap.pop() { popped.append(item) }
        #expect(popped.count == 500 - 167)
        #expect(popped.allSatisfy { $0.sequence % 3 != 0 && $0.payload.value == $0.sequence })
        #expect(zip(popped, popped.dropFirst()).allSatisfy { !($1.heapKey < $0.heapKey) })
    }
}
