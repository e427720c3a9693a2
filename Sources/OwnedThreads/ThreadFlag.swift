#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A yes/no a thread sets on itself and code running on it reads: one pthread key, created once and
/// never deleted (the process's threads read it until they end). A thread-local read per call,
/// because tasks move between threads and the question is always about the thread running now; it
/// costs a `pthread_getspecific`, cheap enough for a check on every small batch.
package struct ThreadFlag: Sendable {
    private let key: pthread_key_t

    package init() {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        self.key = key
    }

    /// Sets the flag on the calling thread, from now until it ends.
    package func setOnCurrentThread() {
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
    }

    /// True on a thread that set the flag.
    package var isSetOnCurrentThread: Bool {
        pthread_getspecific(key) != nil
    }
}
