import Synchronization

/// Waits for work at most a time budget: its result if it finishes first, nil once the budget is
/// spent (or the waiting task is cancelled). The timer that loses the race is cancelled.
///
/// For work that cannot be cancelled and must not hold its caller past a deadline: a blocking
/// librdkafka call on an ``OwnedThread`` (commit, close, flush), or a wait for such a thread to end.
/// Past the budget the caller goes on and the work runs to its end unobserved.
package enum BoundedWait {
    /// Runs `body` and returns its result, or nil once `limit` passed first.
    package static func result<T: Sendable>(within limit: Duration, of body: @escaping @Sendable () async -> T) async -> T? {
        let answer = Answer<T>()
        // The one unstructured task: the body is abandoned after the budget rather than awaited, and
        // a child task would make this scope wait for it (it may block in librdkafka for minutes).
        Task { answer.deliver(await body()) }
        return await withTaskGroup(of: Race<T>.self) { group in
            group.addTask { await answer.value().map(Race.finished) ?? .gaveUp }
            group.addTask {
                try? await Task.sleep(for: limit)
                return .gaveUp
            }
            let first = await group.next() ?? .gaveUp
            // Ends the loser: the timer's sleep, or the wait for a result that came too late.
            group.cancelAll()
            if case .finished(let value) = first { return value }
            return nil
        }
    }

    private enum Race<T: Sendable>: Sendable {
        case finished(T)
        case gaveUp
    }
}

/// The body's result, handed to one waiter whichever of the two comes first; a cancelled waiter is
/// answered nil at once. Each transition is decided under the lock and the continuation resumed
/// after it.
private final class Answer<T: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<T?, Never>)
        case delivered(T)
        case cancelled
    }

    private let state = Mutex(State.empty)

    func deliver(_ value: T) {
        let waiter: CheckedContinuation<T?, Never>? = state.withLock { state in
            switch state {
            case .empty:
                state = .delivered(value)
                return nil
            case .waiting(let continuation):
                state = .delivered(value)
                return continuation
            case .delivered, .cancelled:
                return nil
            }
        }
        waiter?.resume(returning: value)
    }

    func value() async -> T? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
                let now: T?? = state.withLock { state in
                    switch state {
                    case .empty:
                        state = .waiting(continuation)
                        return .none
                    case .delivered(let value): return .some(value)
                    case .cancelled: return .some(nil)
                    case .waiting: preconditionFailure("one waiter only")
                    }
                }
                if case .some(let value) = now { continuation.resume(returning: value) }
            }
        } onCancel: {
            let waiter: CheckedContinuation<T?, Never>? = state.withLock { state in
                switch state {
                case .waiting(let continuation):
                    state = .cancelled
                    return continuation
                case .empty:
                    state = .cancelled
                    return nil
                case .delivered, .cancelled:
                    return nil
                }
            }
            waiter?.resume(returning: nil)
        }
    }
}
