import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KSMOperations
import KSMService

extension RunningProcess {
    /// The worker's `/status`, or nil while the admin port does not answer.
    func status() async -> WorkerStatus? {
        guard let port = adminPort, let url = URL(string: "http://127.0.0.1:\(port)/status"),
              let (data, response) = try? await URLSession.shared.data(from: url), (response as? HTTPURLResponse)?.statusCode == 200
        else { return nil }
        return WorkerStatus(json: Array(data))
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
