/// A count limit of a policy (devices per account, concurrent streams per account).
///
/// JSON: an integer of at least 1, or the string `"unlimited"`.
package enum PolicyLimit: Hashable, Sendable, CustomStringConvertible {
    case unlimited
    /// At most this many; always at least 1 when read from JSON.
    case maximum(Int)

    /// True when `count` items already fill the limit, so one more would exceed it.
    package func isFull(with count: Int) -> Bool {
        switch self {
        case .unlimited: false
        case .maximum(let n): count >= n
        }
    }

    package var description: String {
        switch self {
        case .unlimited: "unlimited"
        case .maximum(let n): "\(n)"
        }
    }
}
