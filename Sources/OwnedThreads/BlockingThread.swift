#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Marks a thread of the project's own on which short blocking I/O is allowed: a task running there
/// may do a Redis round trip in place instead of handing it to another thread and waiting to be
/// woken. Swift's cooperative pool is never marked (a blocked pool thread stalls every task), only
/// dedicated threads whose owner accepts the wait (the crypto threads).
///
/// A thread-local flag, read per call: tasks move between threads, so the question is always about
/// the thread running now.
package enum BlockingThread {
    // Created once; never deleted (the process's threads read it until they end).
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Allows blocking I/O on the calling thread from now until it ends.
    package static func markCurrent() {
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
    }

    /// True on a thread marked by ``markCurrent()``.
    package static var isCurrent: Bool {
        pthread_getspecific(key) != nil
    }
}
