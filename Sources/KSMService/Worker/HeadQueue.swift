/// A first-in, first-out queue as an array with a moving head: O(1) append and removal at the
/// front, compacted once the consumed prefix is at least half the storage (amortized O(1)), so a
/// queue thousands deep during a burst never moves its elements for every one taken.
struct HeadQueue<Element: Sendable>: Sendable {
    private var storage: [Element]
    private var head = 0

    init(_ elements: [Element] = []) { storage = elements }

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }
    var first: Element? { isEmpty ? nil : storage[head] }
    /// The queued elements, oldest first (indices are not zero-based).
    var elements: ArraySlice<Element> { storage[head...] }

    mutating func append(_ element: Element) { storage.append(element) }

    mutating func popFirst() -> Element? {
        guard let element = first else { return nil }
        head += 1
        compact()
        return element
    }

    /// Removes and returns up to `limit` elements from the front.
    mutating func popFirst(_ limit: Int) -> [Element] {
        let end = min(storage.count, head + max(0, limit))
        let taken = Array(storage[head..<end])
        head = end
        compact()
        return taken
    }

    private mutating func compact() {
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }
}
