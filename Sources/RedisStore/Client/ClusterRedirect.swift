/// A Redis Cluster error reply that says to send a command again: elsewhere (`MOVED`, `ASK`) or
/// later (`TRYAGAIN`, `CLUSTERDOWN`).
package struct ClusterRedirect: Sendable, Equatable {
    package enum Kind: Sendable, Equatable {
        /// The slot lives on `node` for good: update the map and resend there.
        case moved(slot: Int, node: RedisNodeAddress)
        /// The slot is migrating and this key may be on `node`: resend once after `ASKING`.
        case ask(slot: Int, node: RedisNodeAddress)
        /// A multi-key command during a migration whose keys are split between the two nodes.
        case tryAgain
        /// The cluster cannot serve the slot now (a master down, before its replica takes over).
        case clusterDown
    }

    package var kind: Kind
    package var message: String

    /// The redirect in `value`: nil for any other reply (other errors included).
    /// - Throws: `.unexpectedReply` for a `MOVED` or `ASK` that does not name a slot in 0...16383
    ///   and a `host:port` with a port in 1...65535: following it would route by garbage.
    package static func parse(_ value: RedisValue) throws(RedisError) -> ClusterRedirect? {
        guard case .error(let message) = value else { return nil }
        // Exactly one space between fields, as Redis writes them: `MOVED  1 h:1` is malformed.
        let parts = message.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard let code = parts.first else { return nil }
        let kind: Kind
        switch code {
        case "MOVED", "ASK":
            func malformed(_ problem: String) -> RedisError {
                RedisError(.unexpectedReply, "malformed \(code) redirect (\(problem)): \(message.prefix(200))", isRetriable: false)
            }
            guard parts.count >= 3 else { throw malformed("expected \(code) <slot> <host:port>") }
            guard let slot = Int(parts[1]), (0..<HashSlot.count).contains(slot) else {
                throw malformed("slot is not in 0...\(HashSlot.count - 1)")
            }
            guard let node = RedisNodeAddress(redirectTarget: parts[2]) else {
                throw malformed("target is not host:port with a port in 1...65535")
            }
            kind = code == "MOVED" ? .moved(slot: slot, node: node) : .ask(slot: slot, node: node)
        case "TRYAGAIN":
            kind = .tryAgain
        case "CLUSTERDOWN":
            kind = .clusterDown
        default:
            return nil
        }
        return ClusterRedirect(kind: kind, message: message)
    }
}
