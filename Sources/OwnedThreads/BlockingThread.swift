/// Marks a thread of the project's own on which short blocking I/O is allowed: a task running there
/// may do a Redis round trip in place instead of handing it to another thread and waiting to be
/// woken. Swift's cooperative pool is never marked (a blocked pool thread stalls every task), only
/// dedicated threads whose owner accepts the wait (the crypto threads).
package enum BlockingThread {
    private static let flag = ThreadFlag()

    /// Allows blocking I/O on the calling thread from now until it ends.
    package static func markCurrent() {
        flag.setOnCurrentThread()
    }

    /// True on a thread marked by ``markCurrent()``.
    package static var isCurrent: Bool {
        flag.isSetOnCurrentThread
    }
}
