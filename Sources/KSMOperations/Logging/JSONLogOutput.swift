import Foundation
import KSMService
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where ``JSONLogHandler`` writes: standard error, or a closure (tests). Lines are written whole,
/// one at a time.
package final class JSONLogOutput: Sendable {
    private let sink: Mutex<@Sendable (String) -> Void>

    package init(_ sink: @escaping @Sendable (String) -> Void) {
        self.sink = Mutex(sink)
    }

    /// Standard error, unbuffered: a line is on its way before the next log call returns.
    package static let standardError = JSONLogOutput { line in
        let bytes = Array(line.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.write(2, base + written, buffer.count - written)
            }
            guard n > 0 else { return }
            written += n
        }
    }

    func write(_ line: String) {
        sink.withLock { $0(line) }
    }
}
