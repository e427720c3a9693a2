#if canImport(Glibc)
    import Glibc
#endif

/// A loopback socket that could not be made: the call that failed and its `errno`.
package struct LoopbackSocketError: Error, CustomStringConvertible, Equatable {
    /// `socket`, `bind` or `getsockname`.
    package var operation: String
    package var errno: Int32

    package var description: String {
        "loopback socket: \(operation) failed: \(String(cString: strerror(errno)))"
    }
}
