#if canImport(Glibc)
    import Glibc
#endif

/// A TCP socket bound to a given port on 127.0.0.1 with `SO_REUSEADDR`, as librdkafka's mock
/// brokers bind theirs: whether a broker can come back on its port is whether this succeeds.
enum LoopbackPort {
    /// The bound descriptor (the caller closes it, or listens on it), or nil when the port is held.
    static func bind(_ port: UInt16) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard bound else {
            close(fd)
            return nil
        }
        return fd
    }
}
