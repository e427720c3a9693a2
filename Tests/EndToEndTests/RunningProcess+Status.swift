import Foundation
import KSMLoad
import KSMOperations

extension RunningProcess {
    /// The worker's `/status`, or nil while the admin port does not answer.
    func status() async -> WorkerStatus? {
        guard let adminPort else { return nil }
        return await WorkerStatus.fetch(port: adminPort)
    }

    /// Polls `/status` until `condition` holds (the machine channel for progress; no log text).
    func waitForStatus(timeout: Duration = .seconds(30), _ what: String, _ condition: (WorkerStatus) -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        var last: WorkerStatus?
        while true {
            last = await status() ?? last
            if let last, condition(last) { return }
            guard process.isRunning, ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ProcessFailure(description: "\(name): \(what) never held; last status \(String(describing: last)); stderr:\n\(stderr.suffix(3000))")
    }
}
