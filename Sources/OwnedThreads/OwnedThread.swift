import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An OS thread of the project's own, for blocking work that must never occupy Swift's cooperative
/// pool: librdkafka's polls, RSA on the crypto threads, reading a control channel, a test server's
/// accept loop. The one way the project starts a thread (docs/worker.md, "Threads").
package final class OwnedThread: @unchecked Sendable {
    // @unchecked: `thread` is written once before the object is shared and only read by `join`/`detach`.
    private let thread: pthread_t

    private final class Body {
        let name: String
        let run: () -> Void
        init(name: String, _ run: @escaping () -> Void) {
            self.name = name
            self.run = run
        }
    }

    private init(thread: pthread_t) {
        self.thread = thread
    }

    /// Starts `body` on a new joinable thread named `name`; the caller must `join()` or `detach()`
    /// it exactly once.
    /// - Parameter stackSize: bytes; nil keeps the system's default.
    package static func start(name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) -> OwnedThread {
        let box = Unmanaged.passRetained(Body(name: name, body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        #if canImport(Glibc)
            var thread = pthread_t()
        #else
            var thread: pthread_t? = nil
        #endif
        let rc = pthread_create(
            &thread, &attributes,
            { arg in
                guard let arg else { return nil }
                // Balances the passRetained above: the thread owns the body now.
                let body = Unmanaged<Body>.fromOpaque(arg).takeRetainedValue()
                pthread_setspecific(OwnedThread.markerKey, UnsafeRawPointer(bitPattern: 1))
                OwnedThread.nameCurrent(body.name)
                body.run()
                return nil
            }, box)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        #if canImport(Glibc)
            return OwnedThread(thread: thread)
        #else
            guard let thread else { preconditionFailure("pthread_create gave no thread") }
            return OwnedThread(thread: thread)
        #endif
    }

    /// Blocks the calling thread until the thread ends; never call it from async code.
    package func join() {
        _ = pthread_join(thread, nil)
    }

    /// For threads nobody joins: their resources are reclaimed when they end.
    package func detach() {
        _ = pthread_detach(thread)
    }

    /// Runs one blocking call on a fresh thread and resumes the caller with its result.
    package static func run<T: Sendable>(name: String, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            OwnedThread.start(name: name) {
                continuation.resume(returning: body())
            }.detach()
        }
    }

    /// True on a thread started by ``start(name:stackSize:_:)``: a blocking call there holds up no
    /// one else, whereas on Swift's cooperative pool (two threads on a two-core host) it holds up
    /// every task. Owners of C handles whose teardown can block use it to decide where to tear down.
    package static var isCurrent: Bool { pthread_getspecific(markerKey) != nil }

    /// Runs blocking teardown off the cooperative pool: here when the caller is already a thread of
    /// ours, else on a new detached one (for a `deinit`, which runs wherever the last reference drops).
    package static func runOffPool(name: String, _ body: @escaping @Sendable () -> Void) {
        if isCurrent {
            body()
        } else {
            start(name: name, body).detach()
        }
    }

    /// Set (to any non-nil value) on every thread this type starts.
    private static let markerKey: pthread_key_t = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key, nil)
        precondition(rc == 0, "pthread_key_create failed: \(rc)")
        return key
    }()

    /// Names the calling thread (Linux keeps 15 bytes). Profilers and `CPUAccount` group threads by
    /// name; Linux applies a name only when the thread sets its own, and `pthread_setname_np` is not
    /// exported to Swift, so the thread writes its comm file.
    package static func nameCurrent(_ name: String) {
        #if os(Linux)
            try? Data(name.prefix(15).utf8).write(to: URL(fileURLWithPath: "/proc/thread-self/comm"))
        #endif
    }
}
