import Synchronization

/// A Lua script run with `EVALSHA`, falling back to `EVAL` when the server answers `NOSCRIPT`.
///
/// The SHA-1 is learnt from the server's `SCRIPT LOAD` on first use (this module does no hashing of
/// its own) and cached here, so one script object serves every client and connection.
/// `Sendable`: the cached SHA sits behind a `Mutex`.
package final class RedisScript: Sendable {
    /// The Lua source.
    package let source: String
    private let cachedSHA = Mutex<String?>(nil)

    package init(_ source: String) {
        self.source = source
    }

    /// The SHA-1 the server reported for this script; nil until first loaded.
    package var sha1: String? { cachedSHA.withLock { $0 } }

    func remember(sha1: String) { cachedSHA.withLock { $0 = sha1 } }
}
