/// A FIFO of consumer events with O(1) removal at the front (an array with a moving head), because
/// the buffer holds thousands of messages during a burst and `Array.removeFirst` would move them all
/// for every event handed out.
struct EventQueue {
    private var storage: [KafkaConsumer.Event] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }

    mutating func append(_ event: KafkaConsumer.Event) {
        storage.append(event)
    }

    /// Puts an event in front of the others (a revocation jumps the queue).
    mutating func prepend(_ event: KafkaConsumer.Event) {
        if head > 0 {
            head -= 1
            storage[head] = event
        } else {
            storage.insert(event, at: 0)
        }
    }

    mutating func popFirst() -> KafkaConsumer.Event? {
        guard head < storage.count else { return nil }
        let event = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024, head * 2 >= storage.count {
            // Compact once the consumed prefix is at least half the storage: amortized O(1).
            storage.removeFirst(head)
            head = 0
        }
        return event
    }

    /// Removes every event for which `drop` is true, keeping the order of the rest.
    mutating func removeAll(where drop: (KafkaConsumer.Event) -> Bool) {
        storage = storage[head...].filter { !drop($0) }
        head = 0
    }
}
