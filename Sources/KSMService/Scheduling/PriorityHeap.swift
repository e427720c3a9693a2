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
/// Keys and elements sit in two arrays moved in step. Sifting moves elements through unsafe buffers
/// (`UnsafeMutableBufferPointer.swapAt` moves, never copies): `Array.swapAt` copies each element,
/// a retain and a release on a job box scattered in memory, and in a join-heavy storm those were the
/// largest single source of retains in the worker's profile (docs/performance.md).
struct PriorityHeap<Element: HeapOrdered & Sendable>: Sendable {
    private var keys: [Element.HeapKey] = []
    private(set) var elements: [Element] = []

    init() {}

    var isEmpty: Bool { elements.isEmpty }
    var count: Int { elements.count }
    var first: Element? { elements.first }

    mutating func push(_ element: Element) {
        let key = element.heapKey
        keys.append(key)
        elements.append(element)
        let child = elements.count - 1
        keys.withUnsafeMutableBufferPointer { keys in
            elements.withUnsafeMutableBufferPointer { elements in
                var child = child
                while child > 0 {
                    let parent = (child - 1) / 2
                    guard key < keys[parent] else { break }
                    keys.swapAt(child, parent)
                    elements.swapAt(child, parent)
                    child = parent
                }
            }
        }
    }

    mutating func pop() -> Element? {
        guard !elements.isEmpty else { return nil }
        let last = elements.count - 1
        keys.withUnsafeMutableBufferPointer { $0.swapAt(0, last) }
        elements.withUnsafeMutableBufferPointer { $0.swapAt(0, last) }
        keys.removeLast()
        let top = elements.removeLast()
        keys.withUnsafeMutableBufferPointer { keys in
            elements.withUnsafeMutableBufferPointer { elements in
                let count = keys.count
                var parent = 0
                while true {
                    let left = 2 * parent + 1
                    let right = left + 1
                    var next = parent
                    if left < count, keys[left] < keys[next] { next = left }
                    if right < count, keys[right] < keys[next] { next = right }
                    if next == parent { break }
                    keys.swapAt(parent, next)
                    elements.swapAt(parent, next)
                    parent = next
                }
            }
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
