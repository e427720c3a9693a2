import CJemalloc

/// The allocator serving this process, named in the worker's start line and the bench's output:
/// the figures in docs/performance.md were measured on jemalloc, and a build that lost the link
/// would fall back to glibc's malloc without any other sign.
enum Allocator {
    /// "jemalloc 5.3.0-…" when jemalloc serves Swift's allocations in this process; otherwise
    /// "glibc malloc" (jemalloc loaded but not first in symbol lookup serves nobody).
    static let description: String = {
        guard let version = jemallocVersion() else { return "glibc malloc" }
        return servesSwiftAllocations() ? "jemalloc \(version)" : "glibc malloc (jemalloc \(version) loaded, unused)"
    }()

    private static func jemallocVersion() -> String? {
        var text: UnsafePointer<CChar>?
        var length = MemoryLayout<UnsafePointer<CChar>?>.size
        guard mallctl("version", &text, &length, nil, 0) == 0, let text else { return nil }
        return String(cString: text)
    }

    /// True when a Swift allocation shows up in jemalloc's per-thread byte counter.
    private static func servesSwiftAllocations() -> Bool {
        func allocatedByThisThread() -> UInt64? {
            var bytes: UInt64 = 0
            var length = MemoryLayout<UInt64>.size
            return mallctl("thread.allocated", &bytes, &length, nil, 0) == 0 ? bytes : nil
        }
        guard let before = allocatedByThisThread() else { return false }
        let probe = [UInt8](repeating: 1, count: 1 << 20)
        let after = allocatedByThisThread() ?? before
        return withExtendedLifetime(probe) { after &- before >= UInt64(probe.count) }
    }
}
