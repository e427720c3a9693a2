import Synchronization

/// Commands a server refused as unknown syntax, so the store stops sending them and uses the older
/// form. `SET key value NX PX ms GET` (store a reply unless one exists, and return the existing one)
/// needs Redis 7.0; before that the store falls back to a Lua script doing the same.
final class RedisCompatibility: Sendable {
    private let setNXGetRefused = Atomic<Bool>(false)

    /// True until a server refused `SET ... NX ... GET`.
    var usesSetNXGet: Bool { !setNXGetRefused.load(ordering: .relaxed) }

    func refuseSetNXGet() { setNXGetRefused.store(true, ordering: .relaxed) }

    /// A server's answer to an option combination it does not know (Redis 6.2: "ERR syntax error").
    static func isSyntaxError(_ value: RedisValue) -> Bool {
        if case .error(let message) = value { return message.lowercased().contains("syntax error") }
        return false
    }
}
