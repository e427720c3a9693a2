/// A Redis Cluster error reply that says to send a command again: elsewhere (`MOVED`, `ASK`) or
/// later (`TRYAGAIN`, `CLUSTERDOWN`).
struct ClusterRedirect {
    enum Kind {
        /// The slot lives on `node` for good: update the map and resend there.
        case moved(slot: Int, node: RedisNodeAddress)
        /// The slot is migrating and this key may be on `node`: resend once after `ASKING`.
        case ask(slot: Int, node: RedisNodeAddress)
        /// A multi-key command during a migration whose keys are split between the two nodes.
        case tryAgain
        /// The cluster cannot serve the slot now (a master down, before its replica takes over).
        case clusterDown
    }

    var kind: Kind
    var message: String

    /// The redirect in `value`, nil for any other reply (errors included).
    init?(_ value: RedisValue) {
        guard case .error(let message) = value else { return nil }
        let parts = message.split(separator: " ", maxSplits: 3)
        guard let code = parts.first else { return nil }
        switch code {
        case "MOVED", "ASK":
            guard parts.count >= 3, let slot = Int(parts[1]), let node = RedisNodeAddress(redirectTarget: parts[2]) else { return nil }
            kind = code == "MOVED" ? .moved(slot: slot, node: node) : .ask(slot: slot, node: node)
        case "TRYAGAIN":
            kind = .tryAgain
        case "CLUSTERDOWN":
            kind = .clusterDown
        default:
            return nil
        }
        self.message = message
    }
}
