import Dispatch

/// A ``CryptoPool``'s threads as a task executor: a task that prefers it runs its synchronous stretches
/// on a crypto thread, where RSA and CKC building run in place (``CryptoPool/map(_:_:)``) and a Redis
/// round trip waits in place (`BlockingThread`), so a batch of a job or two crosses no thread between
/// its stages.
///
/// Every job is one entry of the pool's queue, taken by whichever crypto thread is free next. After
/// the pool has shut down, jobs run on the global concurrent queue: no task is ever dropped.
package final class CryptoThreadExecutor: TaskExecutor {
    private let queue: WorkQueue

    init(queue: WorkQueue) {
        self.queue = queue
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        if !queue.submit(count: 1, { unowned.runSynchronously(on: executor) }) {
            DispatchQueue.global().async { unowned.runSynchronously(on: executor) }
        }
    }
}
