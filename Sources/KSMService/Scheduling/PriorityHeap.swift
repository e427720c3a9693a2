/// What a ``PriorityHeap`` orders by: a small plain key kept beside each element, so a comparison
/// reads two keys and never copies (retains and releases) the elements themselves; a storm makes a
/// few dozen comparisons per job.
protocol HeapOrdered {
    associatedtype HeapKey: Comparable & Sendable
    /// Smaller keys come out first.
    var heapKey: HeapKey { get }
}

/// A binary min-heap: the scheduler's per-tenant queue, ordered earliest deadline first.
///
/// A plain array heap: push and pop are O(log n), and a storm queues thousands of jobs per tenant.
/// Keys and elements sit in two arrays moved in step.
struct PriorityHeap<Element: HeapOrdered & Sendable>: Sendable {
    private var keys: [Element.HeapKey] = []
    private(set) var elements: [Element] = []

    init() {}

    var isEmpty: Bool { elements.isEmpty }
    var count: Int { elements.count }
    var first: Element? { elements.first }

    private mutating func swapAt(_ a: Int, _ b: Int) {
        keys.swapAt(a, b)
        elements.swapAt(a, b)
    }

    mutating func push(_ element: Element) {
        keys.append(element.heapKey)
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard keys[child] < keys[parent] else { break }
            swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Element? {
        guard !elements.isEmpty else { return nil }
        swapAt(0, elements.count - 1)
        keys.removeLast()
        let top = elements.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var next = parent
            if left < keys.count, keys[left] < keys[next] { next = left }
            if right < keys.count, keys[right] < keys[next] { next = right }
            if next == parent { break }
            swapAt(parent, next)
            parent = next
        }
        return top
    }

    /// Keeps only the elements for which `keep` is true (a revocation); O(n log n).
    mutating func filter(_ keep: (Element) -> Bool) {
        let kept = elements.filter(keep)
        keys.removeAll(keepingCapacity: true)
        elements.removeAll(keepingCapacity: true)
        for element in kept { push(element) }
    }
}
