import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket bound to 127.0.0.1 on a port the kernel picks: the one place tests and test
/// servers get a free loopback port from.
public enum LoopbackSocket {
    /// A new socket bound to 127.0.0.1:0, and the port it got. The caller owns the descriptor: it
    /// listens on it, or closes it to hand the port to another process.
    /// - Parameter reuseAddress: `SO_REUSEADDR`, for a listener that must re-bind at once after a
    ///   restart. Off for a socket that only holds a port: on Linux another `SO_REUSEADDR` socket may
    ///   bind (and listen on) a port whose holder does not listen.
    public static func bound(reuseAddress: Bool = true) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var one: Int32 = 1
        if reuseAddress {
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(fd, sa, length) == 0 && getsockname(fd, sa, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// ``bound(reuseAddress:)`` on a port never handed out before by this process: test ports are
    /// used once, since a port a test freed (a killed server, a stopped worker's admin port) may
    /// still have clients knocking on it.
    public static func boundOnUnusedPort(reuseAddress: Bool = true) throws -> (fd: Int32, port: Int) {
        for _ in 0..<100 {
            let (fd, port) = try bound(reuseAddress: reuseAddress)
            if claimed.withLock({ $0.insert(port).inserted }) { return (fd, port) }
            close(fd)
        }
        throw POSIXError(.EADDRINUSE)
    }

    private static let claimed = Mutex<Set<Int>>([])
}
