import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP socket bound to 127.0.0.1 on a free port: the one place tests and test
/// servers get a free loopback port from.
public enum LoopbackSocket {
    /// A new socket bound to 127.0.0.1:0, and the port it got. The caller owns the descriptor: it
    /// listens on it, or closes it to hand the port to another process.
    /// - Parameter reuseAddress: `SO_REUSEADDR`, for a listener that must re-bind at once after a
    ///   restart. Off for a socket that only holds a port: on Linux another `SO_REUSEADDR` socket may
    ///   bind (and listen on) a port whose holder does not listen.
    /// - Parameter port: the port to bind; 0 lets the kernel pick one from its ephemeral range.
    public static func bound(reuseAddress: Bool = true, port: Int = 0) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var one: Int32 = 1
        if reuseAddress {
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(clamping: port).bigEndian
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

    /// ``bound(reuseAddress:port:)`` on a port never handed out before by this process: test ports
    /// are used once, since a port a test freed (a killed server, a stopped worker's admin port) may
    /// still have clients knocking on it.
    ///
    /// The port comes from below the kernel's ephemeral range where it can: a port handed to a
    /// server that binds it a moment later could otherwise be taken meanwhile as the local end of
    /// any outgoing connection (a CI run saw a worker's admin port taken so).
    public static func boundOnUnusedPort(reuseAddress: Bool = true) throws -> (fd: Int32, port: Int) {
        let below = ephemeralRangeStart
        for attempt in 0..<200 {
            let choice = attempt < 150 && below > 11_000 ? Int.random(in: 10_000..<below) : 0
            guard let (fd, port) = try? bound(reuseAddress: reuseAddress, port: choice) else { continue }
            if claimed.withLock({ $0.insert(port).inserted }) { return (fd, port) }
            close(fd)
        }
        throw POSIXError(.EADDRINUSE)
    }

    private static let claimed = Mutex<Set<Int>>([])

    /// The first port of `net.ipv4.ip_local_port_range` (32768 when it cannot be read).
    private static let ephemeralRangeStart: Int = {
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8),
            let first = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.flatMap({ Int($0) })
        else { return 32_768 }
        return first
    }()
}
