/// What a ``PriorityHeap`` orders by. A static requirement rather than a stored closure, so the
/// comparison is specialised and inlined: an opaque closure made every comparison copy (retain and
/// release) both elements, a few dozen times per job in a storm.
protocol HeapOrdered {
    /// True when `a` must come out before `b`.
    static func precedes(_ a: Self, _ b: Self) -> Bool
}

/// A binary min-heap: the scheduler's per-tenant queue, ordered earliest deadline first.
///
/// A plain array heap: push and pop are O(log n), and a storm queues thousands of jobs per tenant.
struct PriorityHeap<Element: HeapOrdered & Sendable>: Sendable {
    private(set) var elements: [Element] = []

    init() {}

    private func precedes(_ a: Int, _ b: Int) -> Bool {
        elements.withUnsafeBufferPointer { Element.precedes($0[a], $0[b]) }
    }

    var isEmpty: Bool { elements.isEmpty }
    var count: Int { elements.count }
    var first: Element? { elements.first }

    mutating func push(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(child, parent) else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Element? {
        guard !elements.isEmpty else { return nil }
        elements.swapAt(0, elements.count - 1)
        let top = elements.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var next = parent
            if left < elements.count, precedes(left, next) { next = left }
            if right < elements.count, precedes(right, next) { next = right }
            if next == parent { break }
            elements.swapAt(parent, next)
            parent = next
        }
        return top
    }

    /// Keeps only the elements for which `keep` is true (a revocation); O(n log n).
    mutating func filter(_ keep: (Element) -> Bool) {
        let kept = elements.filter(keep)
        elements.removeAll(keepingCapacity: true)
        for element in kept { push(element) }
    }
}
