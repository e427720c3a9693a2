import Foundation
import OwnedThreads
import Synchronization

/// A fixed set of dedicated threads for CPU-bound cryptography (RSA decrypts of SPCs, CKC building),
/// so that work never occupies Swift's cooperative pool, where it would starve the Kafka and Redis
/// tasks that keep the worker responsive.
///
/// Size it to the cores (the default): RSA is pure CPU, more threads than cores only add switching.
/// ``map(_:_:)`` hands a whole batch to the pool at once: every thread pulls the next item from a
/// shared index until none is left (dynamic balancing, one continuation per batch, not per item).
///
/// `Sendable`: the queue is a `Mutex`-protected array plus a counting semaphore; threads only share
/// the queue object. Call ``shutdown()`` (or release the pool) to hand the threads back once queued
/// work is done (they park in ``CryptoThreadReservoir``, never exit); work submitted after shutdown
/// runs on the caller's task instead, so nothing is lost.
public final class CryptoPool: Sendable {
    /// How many threads the pool runs.
    public let threadCount: Int
    private let queue: WorkQueue

    /// Runs on `threadCount` threads named "<name>-<n>" (the last 15 bytes on Linux), borrowed from
    /// the process's ``CryptoThreadReservoir`` (started on first need, never exiting). Default: the
    /// active processor count.
    public convenience init(threadCount: Int = ProcessInfo.processInfo.activeProcessorCount, name: String = "ksm-crypto") {
        self.init(threadCount: threadCount, name: name, reservoir: .shared)
    }

    init(threadCount: Int, name: String, reservoir: CryptoThreadReservoir) {
        let count = max(1, threadCount)
        self.threadCount = count
        self.queue = WorkQueue()
        self.executor = CryptoThreadExecutor(queue: queue)
        for index in 0..<count {
            let queue = self.queue
            let threadName = String(decoding: Array("\(name)-\(index)".utf8).suffix(15), as: UTF8.self)
            reservoir.run(name: threadName) { queue.runWorker() }
        }
    }

    deinit {
        queue.shutdown(threads: threadCount)
    }

    /// Set on every crypto thread: read by ``map(_:_:)`` for each small batch, so a thread-local
    /// key rather than a lookup in Foundation's thread dictionary.
    private static let poolThread = ThreadFlag()

    /// Marks a crypto thread: RSA may run here, and so may a Redis round trip of a task the thread
    /// runs (``executor``), which then waits in place instead of waking a thread of its own.
    static func markCurrentThread() {
        poolThread.setOnCurrentThread()
        BlockingThread.markCurrent()
    }

    /// True on a thread of any `CryptoPool` (for assertions: RSA should run only there).
    public static var isPoolThread: Bool {
        poolThread.isSetOnCurrentThread
    }

    /// Hands the threads back to the reservoir after the work already queued. Idempotent.
    public func shutdown() {
        queue.shutdown(threads: threadCount)
    }

    /// Runs `work` on a pool thread and returns its result.
    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await map([()]) { _ in work() }[0]
    }

    /// Runs tasks on the pool's threads (`withTaskExecutorPreference(pool.executor)`): a small batch
    /// then does its RSA, CKC building and store round trips on one crypto thread, each step in
    /// place, instead of crossing to another thread and back for every one.
    package let executor: CryptoThreadExecutor

    /// At most this many items run in place when ``map(_:_:)`` is called on a crypto thread (a task
    /// on ``executor``); more go to every thread, as from anywhere else.
    package static let inPlaceLimit = 4

    /// Applies `transform` to every item on the pool's threads; results in input order.
    ///
    /// The calling task suspends (it does not block) until every item is done. An empty input
    /// returns at once without touching the pool. Called on a crypto thread with at most
    /// ``inPlaceLimit`` items, it runs them there: the hand-off to another crypto thread and the
    /// wake-up back would cost more than the work they could share.
    public func map<Item: Sendable, T: Sendable>(_ items: [Item], _ transform: @escaping @Sendable (Item) -> T) async -> [T] {
        if items.isEmpty { return [] }
        if items.count <= Self.inPlaceLimit, Self.isPoolThread { return items.map(transform) }
        return await withCheckedContinuation { (continuation: CheckedContinuation<[T], Never>) in
            let batch = Batch(items: items, transform: transform, continuation: continuation)
            // One drainer per thread, but never more than items: each pulls indices until none remain.
            let drainers = min(threadCount, items.count)
            if !queue.submit(count: drainers, batch.drain) {
                // Shut down: do the work here rather than drop it.
                batch.drain()
            }
        }
    }
}

/// One `map` call in flight: items, a shared next-index counter, results, and who to wake.
private final class Batch<Item: Sendable, T: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable`: `items` and `transform` are immutable; `next` and `finished` are
    // atomics; each `results` slot is written by exactly one thread (the one that claimed its index
    // from `next`) and read only after `finished` reaches the item count, with acquire-release
    // ordering making those writes visible to the resuming thread.
    private let items: [Item]
    private let transform: @Sendable (Item) -> T
    private let results: UnsafeMutableBufferPointer<T?>
    private let next = Atomic<Int>(0)
    private let finished = Atomic<Int>(0)
    private let continuation: CheckedContinuation<[T], Never>

    init(items: [Item], transform: @escaping @Sendable (Item) -> T, continuation: CheckedContinuation<[T], Never>) {
        self.items = items
        self.transform = transform
        self.continuation = continuation
        results = .allocate(capacity: items.count)
        results.initialize(repeating: nil)
    }

    deinit {
        results.deinitialize()
        results.deallocate()
    }

    /// Claims and runs items until none are left; whoever finishes the last one resumes the caller.
    func drain() {
        while true {
            let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
            guard index < items.count else { return }
            results[index] = transform(items[index])
            let done = finished.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue
            if done == items.count {
                // Every slot was written before its `finished` increment, which this one acquired.
                continuation.resume(
                    returning: results.map { result in
                        guard let result else { preconditionFailure("a crypto pool result was read before its item ran") }
                        return result
                    })
            }
        }
    }
}

/// The pool's FIFO of closures and the semaphore counting them.
final class WorkQueue: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var head = 0
        var isShutDown = false
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)

    /// Enqueues `count` copies of `job`; false (nothing enqueued) after shutdown.
    func submit(count: Int, _ job: @escaping @Sendable () -> Void) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.isShutDown else { return false }
            for _ in 0..<count { state.jobs.append(job) }
            return true
        }
        if accepted {
            for _ in 0..<count { available.signal() }
        }
        return accepted
    }

    func shutdown(threads: Int) {
        let first = state.withLock { state -> Bool in
            defer { state.isShutDown = true }
            return !state.isShutDown
        }
        // One wake-up per thread; each finds the queue empty and shut down, and exits.
        if first {
            for _ in 0..<threads { available.signal() }
        }
    }

    /// A worker thread's loop: blocks on the semaphore (on its own thread, never the cooperative
    /// pool), runs jobs in order, exits once shut down and drained.
    func runWorker() {
        while true {
            available.wait()
            let job = state.withLock { state -> (@Sendable () -> Void)? in
                guard state.head < state.jobs.count else { return nil }
                let job = state.jobs[state.head]
                state.head += 1
                if state.head >= 64, state.head * 2 >= state.jobs.count {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                return job
            }
            if let job {
                job()
            } else if state.withLock({ $0.isShutDown }) {
                return
            }
        }
    }
}
