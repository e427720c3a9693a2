import Synchronization

/// Commits stored offsets soon after a batch stores them: at once when the last commit is older
/// than `interval`, else once at the end of that interval (a request is never dropped, only merged).
///
/// Why not librdkafka's auto-commit at the same interval: its main thread waits for its next timer
/// in whole milliseconds and spins through the last one, so a 50 ms `auto.commit.interval.ms` kept
/// about 1.6 % of a core busy even when idle and cost 1-2 µs per job in a storm (docs/performance.md,
/// thirteenth session). An explicit asynchronous commit is an operation on the main thread's queue,
/// served at once, with no timer. The 50 ms bound itself is for shutdown (docs/faults.md §5): a
/// departure rebalance that refuses the final commit finds at most one interval's answers uncommitted.
final class CommitPacer: Sendable {
    private struct State {
        var last: ContinuousClock.Instant?
        var trailing = false
    }

    let interval: Duration
    private let state = Mutex(State())

    init(interval: Duration) {
        self.interval = interval
    }

    /// Asks for a commit; `commit` runs now, or at the end of the current interval if one ran less
    /// than `interval` ago (one trailing commit takes every request made meanwhile).
    func request(_ commit: @escaping @Sendable () -> Void) {
        let now = ContinuousClock.now
        let delay: Duration? = state.withLock { s in
            if s.trailing { return nil }
            if let last = s.last, now - last < interval {
                s.trailing = true
                return interval - (now - last)
            }
            s.last = now
            return .zero
        }
        guard let delay else { return }
        if delay == .zero {
            commit()
            return
        }
        Task {
            try? await Task.sleep(for: delay)
            state.withLock { s in
                s.trailing = false
                s.last = .now
            }
            commit()
        }
    }
}
