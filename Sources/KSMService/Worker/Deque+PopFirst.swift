import DequeModule

extension Deque {
    /// Removes and returns up to `limit` elements from the front, oldest first (a batch out of a
    /// FIFO: the scheduler's and the span processor's).
    mutating func popFirst(_ limit: Int) -> [Element] {
        let taken = Array(prefix(Swift.max(0, limit)))
        removeFirst(taken.count)
        return taken
    }
}
