import Synchronization

/// Commits stored offsets soon after a batch stores them: at once when the last commit is older
/// than `interval`, else once at the end of that interval (a request is never dropped, only merged).
///
/// librdkafka's auto-commit runs every `auto.commit.interval.ms` (5 s by default), so a SIGTERM
/// landing in a group rebalance (when the coordinator refuses commits until every member rejoined)
/// left up to 5 s of answered jobs uncommitted and redelivered. Committing within `interval` of the
/// answer leaves only the jobs of the last interval exposed, at one commit per interval at most.
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

    /// Asks for a commit; `commit` runs now or at the end of the current interval.
    func request(_ commit: @escaping @Sendable () -> Void) {
        let now = ContinuousClock.now
        let delay: Duration? = state.withLock { s in
            if s.trailing { return nil }  // the commit already scheduled takes these offsets too
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
