import Loopback

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback port that refuses every connection for as long as this value lives: bound, never
/// listening. Tests about "nothing there" use it instead of a port that was free a moment ago,
/// which another test's server may take in the meantime (a Redis on it would answer).
package final class RefusingLoopbackPort: Sendable {
    package let port: Int
    private let fd: Int32

    /// A port never handed out before in this process, held without `SO_REUSEADDR` so no server
    /// can bind it while this value lives.
    package init() throws {
        (fd, port) = try LoopbackSocket.boundOnUnusedPort(reuseAddress: false)
    }

    deinit {
        close(fd)
    }
}
