#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An OS thread of our own for librdkafka's blocking calls, so they never occupy Swift's cooperative pool.
final class KafkaThread: @unchecked Sendable {
    // @unchecked: `thread` is written once before the object is shared and only read by `join`.
    private var thread: pthread_t

    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    private init(thread: pthread_t) {
        self.thread = thread
    }

    /// Starts `body` on a new joinable thread; the caller must `join()` it exactly once.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> KafkaThread {
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        #if canImport(Glibc)
        var thread = pthread_t()
        #else
        var thread: pthread_t? = nil
        #endif
        let rc = pthread_create(&thread, nil, { arg in
            // Balances the passRetained above: the thread owns the body now.
            let body = Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue()
            body.run()
            return nil
        }, box)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        #if canImport(Glibc)
        return KafkaThread(thread: thread)
        #else
        return KafkaThread(thread: thread!)
        #endif
    }

    /// Blocks the calling thread until the thread ends; never call it from async code.
    func join() {
        _ = pthread_join(thread, nil)
    }

    /// Runs one blocking call on a fresh thread and resumes the caller with its result.
    static func run<T: Sendable>(name: String, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            let thread = KafkaThread.start(name: name) {
                continuation.resume(returning: body())
            }
            _ = pthread_detach(thread.thread)
        }
    }
}

extension KafkaThread {
    /// For threads nobody joins: their resources are reclaimed when they end.
    func detach() {
        _ = pthread_detach(thread)
    }
}

/// Moves the last reference of a C-handle owner into a one-shot thread, so that dropping it (and so
/// `rd_kafka_destroy`) happens there, before the awaiting caller resumes.
final class LastReference<T: AnyObject>: @unchecked Sendable {
    // @unchecked: `value` is only touched by the one thread that `drop()`s it.
    private var value: T?

    init(_ value: T) {
        self.value = value
    }

    func withValue<R>(_ body: (T) -> R) -> R {
        body(value!)  // only called before `drop()`
    }

    func drop() {
        value = nil
    }
}
