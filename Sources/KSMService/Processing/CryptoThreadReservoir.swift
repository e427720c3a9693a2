import Foundation
import OwnedThreads
import Synchronization

/// The process's crypto threads: a ``CryptoPool`` borrows its threads from here and gives them back
/// when it shuts down. A thread, once started, never exits; it parks until the next pool needs it.
///
/// Why: a thread's exit runs the thread-local destructors of OpenSSL, libdispatch and Foundation.
/// Pool threads tearing down while the process exited (a worker after SIGTERM), or while other
/// threads went on working (tests releasing pools), crashed with "double free or corruption" in about
/// one full test run in six. A parked thread costs its stack and nothing else; the reservoir holds as
/// many as the most pool threads ever alive at once.
final class CryptoThreadReservoir: Sendable {
    /// The one the pools use unless a test brings its own.
    static let shared = CryptoThreadReservoir()

    private let idle = Mutex<[ParkedThread]>([])
    private let startedCount = Atomic<Int>(0)

    /// Threads started so far (each is either running a pool's loop or parked).
    var started: Int { startedCount.load(ordering: .relaxed) }
    /// Threads parked now.
    var parked: Int { idle.withLock { $0.count } }

    /// Runs `body` on a parked thread, or on a new one when none is parked; the thread is named
    /// `name` while it runs `body` and parks again when `body` returns.
    func run(name: String, _ body: @escaping @Sendable () -> Void) {
        if let thread = idle.withLock({ $0.popLast() }) {
            thread.assign(Assignment(name: name, body: body))
            return
        }
        startedCount.add(1, ordering: .relaxed)
        ParkedThread(reservoir: self).start(Assignment(name: name, body: body))
    }

    fileprivate func park(_ thread: ParkedThread) {
        idle.withLock { $0.append(thread) }
    }

    fileprivate struct Assignment: Sendable {
        let name: String
        let body: @Sendable () -> Void
    }

    /// One reservoir thread: runs an assignment, parks, waits for the next.
    fileprivate final class ParkedThread: Sendable {
        private let reservoir: CryptoThreadReservoir
        private let wake = DispatchSemaphore(value: 0)
        private let next = Mutex<Assignment?>(nil)

        init(reservoir: CryptoThreadReservoir) {
            self.reservoir = reservoir
        }

        func start(_ first: Assignment) {
            next.withLock { $0 = first }
            OwnedThread.start(name: first.name, stackSize: 1 << 20) { [self] in loop() }.detach()
            wake.signal()
        }

        func assign(_ assignment: Assignment) {
            next.withLock { $0 = assignment }
            wake.signal()
        }

        private func loop() {
            CryptoPool.markCurrentThread()
            var currentName = ""
            while true {
                wake.wait()
                guard let assignment = next.withLock({ $0.take() }) else { continue }
                if assignment.name != currentName {
                    currentName = assignment.name
                    OwnedThread.nameCurrent(currentName)
                }
                assignment.body()
                reservoir.park(self)
            }
        }
    }
}
