import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP socket bound to 127.0.0.1: the one place the project binds a loopback port, for a test
/// server's free port and for whether a mock Kafka broker can come back on its own.
package enum LoopbackSocket {
    /// A new socket bound to 127.0.0.1:`port`, and the port it got. The caller owns the descriptor:
    /// it listens on it, or closes it to hand the port to another process.
    /// - Parameter reuseAddress: `SO_REUSEADDR`, for a listener that must re-bind at once after a
    ///   restart (librdkafka's mock brokers bind so). Off for a socket that only holds a port: on
    ///   Linux another `SO_REUSEADDR` socket may bind (and listen on) a port whose holder does not listen.
    /// - Parameter port: the port to bind; 0 lets the kernel pick one from its ephemeral range.
    /// - Throws: ``LoopbackSocketError`` with the failing call's `errno` (`EADDRINUSE` for a held port).
    package static func bound(reuseAddress: Bool = true, port: Int = 0) throws(LoopbackSocketError) -> (fd: Int32, port: Int) {
        guard let requested = UInt16(exactly: port) else { throw LoopbackSocketError(operation: "bind", errno: EINVAL) }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LoopbackSocketError(operation: "socket", errno: errno) }
        var one: Int32 = 1
        if reuseAddress {
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = requested.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        var failed: (operation: String, errno: Int32)?
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                if bind(fd, sa, length) != 0 {
                    failed = ("bind", errno)
                } else if getsockname(fd, sa, &length) != 0 {
                    failed = ("getsockname", errno)
                }
            }
        }
        if let failed {
            close(fd)
            throw LoopbackSocketError(operation: failed.operation, errno: failed.errno)
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
    package static func boundOnUnusedPort(reuseAddress: Bool = true) throws(LoopbackSocketError) -> (fd: Int32, port: Int) {
        let below = ephemeralRangeStart
        for attempt in 0..<200 {
            let choice = attempt < 150 && below > 11_000 ? Int.random(in: 10_000..<below) : 0
            guard let (fd, port) = try? bound(reuseAddress: reuseAddress, port: choice) else { continue }
            if claimed.withLock({ $0.insert(port).inserted }) { return (fd, port) }
            close(fd)
        }
        throw LoopbackSocketError(operation: "bind", errno: EADDRINUSE)
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago and never handed out before in this
    /// process (``boundOnUnusedPort(reuseAddress:)``, then released), for a server started next.
    package static func unusedPort() throws(LoopbackSocketError) -> Int {
        let (fd, port) = try boundOnUnusedPort()
        close(fd)
        return port
    }

    private static let claimed = Mutex<Set<Int>>([])

    /// The first port of `net.ipv4.ip_local_port_range` (32768 when it cannot be read).
    private static let ephemeralRangeStart: Int = {
        guard let file = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r") else { return 32_768 }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 64)
        guard fgets(&line, Int32(line.count), file) != nil else { return 32_768 }
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.flatMap { Int($0) } ?? 32_768
    }()
}
