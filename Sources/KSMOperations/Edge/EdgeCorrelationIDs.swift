import Synchronization

/// Correlation IDs unique to one edge start: a random boot nonce and a counter, `<nonce>-<n>`.
///
/// A restarted edge draws a new nonce, so a reply still on its topic for a request of the previous
/// start never matches a request of this one (the reply consumer also starts at the log end; the
/// nonce covers the replies produced while it starts).
package final class EdgeCorrelationIDs: Sendable {
    /// 16 hex digits from the system's random source.
    package let nonce: String
    private let counter = Atomic<UInt64>(0)

    package init(nonce: UInt64 = UInt64.random(in: 0...UInt64.max)) {
        let hex = String(nonce, radix: 16)
        self.nonce = String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The next ID: never the same twice in this process.
    package func next() -> String {
        let n = counter.add(1, ordering: .relaxed).newValue
        return "\(nonce)-\(n)"
    }
}
