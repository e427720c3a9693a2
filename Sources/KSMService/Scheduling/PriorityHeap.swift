/// A binary min-heap: the scheduler's per-tenant queue, ordered earliest deadline first.
///
/// A plain array heap: push and pop are O(log n), and a storm queues thousands of jobs per tenant.
struct PriorityHeap<Element: Sendable>: Sendable {
    private(set) var elements: [Element] = []
    private let precedes: @Sendable (Element, Element) -> Bool

    /// `precedes(a, b)` is true when `a` must come out before `b`.
    init(_ precedes: @escaping @Sendable (Element, Element) -> Bool) {
        self.precedes = precedes
    }

    var isEmpty: Bool { elements.isEmpty }
    var count: Int { elements.count }
    var first: Element? { elements.first }

    mutating func push(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(elements[child], elements[parent]) else { break }
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
            if left < elements.count, precedes(elements[left], elements[next]) { next = left }
            if right < elements.count, precedes(elements[right], elements[next]) { next = right }
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
