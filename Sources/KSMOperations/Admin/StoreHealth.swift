import KSMService
import Synchronization

/// The last result of a periodic store check (Redis PING), read by `/readyz` without blocking.
package final class StoreHealth: Sendable {
    private let state = Mutex<(up: Bool, detail: String)>((false, "not checked yet"))

    package init() {}

    package var isUp: Bool { state.withLock { $0.up } }
    package var detail: String { state.withLock { $0.detail } }

    /// Runs `check` every `interval` until the task is cancelled; `check` returns nil when healthy,
    /// else the reason.
    package func monitor(every interval: Duration = .seconds(2), _ check: @Sendable () async -> String?) async {
        while !Task.isCancelled {
            let failure = await check()
            state.withLock { $0 = failure.map { (false, $0) } ?? (true, "ok") }
            try? await Task.sleep(for: interval)
        }
    }
}
