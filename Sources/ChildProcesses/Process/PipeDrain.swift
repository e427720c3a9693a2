import Foundation
import OwnedThreads
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reads one pipe to its end on a thread of its own, so a child never blocks on a full pipe while
/// the test waits for something else (its other pipe, its exit).
final class PipeDrain: Sendable {
    private struct State {
        var bytes: [UInt8] = []
        var done = false
        /// Set once the child has exited: a grandchild that inherited the pipe may hold it open, so
        /// the reader gives up at this moment instead of waiting for an end that may never come.
        var giveUpAt: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    /// Kept so the descriptor stays open while the thread reads it.
    private let handle: FileHandle

    init(_ handle: FileHandle, name: String) {
        self.handle = handle
        let fd = handle.fileDescriptor
        OwnedThread.start(name: name) { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                // Checked on every pass: a descendant that keeps writing must not keep the reader.
                if state.withLock({ s in s.giveUpAt.map { ContinuousClock.now >= $0 } ?? false }) { break }
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&pfd, 1, 100)
                if ready > 0 {
                    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if n > 0 {
                        state.withLock { $0.bytes += buffer[0..<n] }
                        continue
                    }
                    if n < 0, errno == EINTR || errno == EAGAIN { continue }
                    break  // end of file, or the pipe is gone
                }
                if ready < 0, errno != EINTR { break }
            }
            state.withLock { $0.done = true }
        }.detach()
    }

    /// What was read, once the pipe ended or `giveUpAt` passed.
    func finish(giveUpAt: ContinuousClock.Instant) async -> [UInt8] {
        state.withLock { $0.giveUpAt = $0.giveUpAt ?? giveUpAt }
        while !state.withLock({ $0.done }) { try? await Task.sleep(for: .milliseconds(5)) }
        return state.withLock { $0.bytes }
    }

}
