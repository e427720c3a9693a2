import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A pipe whose both ends are close-on-exec, for a child's standard streams. (`pipe2` is not in
/// Swift's Glibc module; the instant between `pipe` and `fcntl` is all that is left open.)
///
/// Why not Foundation's `Pipe`: its descriptors are inherited by every process spawned while they
/// are open, and Foundation closes in a child only the descriptors that existed when that spawn
/// began, so a server another test starts at the same moment can hold a write end for its whole
/// life: the reader then never sees the end of the output, nor the command the end of its input.
struct ChildPipe {
    let reading: FileHandle
    let writing: FileHandle

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        reading = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true)
        writing = FileHandle(fileDescriptor: fds[1], closeOnDealloc: true)
    }
}
