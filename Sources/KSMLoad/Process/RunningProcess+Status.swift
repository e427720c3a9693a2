import KSMOperations

extension RunningProcess {
    /// The worker's `/status`, or nil while the admin port does not answer.
    package func status() async -> WorkerStatus? {
        guard let adminPort else { return nil }
        return await WorkerStatus.fetch(port: adminPort)
    }

    /// Polls `/status` until `condition` holds (the machine channel for progress; no log text).
    package func waitForStatus(timeout: Duration = .seconds(30), _ what: String, _ condition: (WorkerStatus) -> Bool) async throws(ProcessFailure) {
        let deadline = ContinuousClock.now + timeout
        var last: WorkerStatus?
        while true {
            last = await status() ?? last
            if let last, condition(last) { return }
            guard isRunning, ContinuousClock.now < deadline else { break }
            try? await Task.sleep(for: .milliseconds(50))
        }
        throw ProcessFailure(description: "\(name): \(what) never held; last status \(String(describing: last)); stderr:\n\(stderr.suffix(3000))")
    }

    /// Waits until every worker owns partitions and no assignment changed for 1.5 s (cooperative
    /// rebalancing moves partitions in steps). With `partitions`, the workers must also own that many
    /// between them: between a cooperative rebalance's two rounds the moved partitions have no owner,
    /// and librdkafka's mock cluster can hold that gap for most of a session timeout.
    package static func waitUntilSettled(
        _ workers: [RunningProcess], partitions: Int? = nil,
        timeout: Duration = .seconds(60)
    ) async throws(ProcessFailure) {
        let deadline = ContinuousClock.now + timeout
        var last = -1
        var since = ContinuousClock.now
        while ContinuousClock.now < deadline {
            if let dead = workers.first(where: { !$0.isRunning }) {
                throw ProcessFailure(description: "\(dead.name) exited early: \(dead.stderr.suffix(600))")
            }
            var statuses: [WorkerStatus] = []
            for worker in workers { if let status = await worker.status() { statuses.append(status) } }
            let changes = statuses.reduce(0) { $0 + $1.partitionChanges }
            if statuses.count < workers.count || changes != last {
                last = statuses.count < workers.count ? -1 : changes
                since = .now
            } else if statuses.allSatisfy({ $0.assignedPartitions > 0 }),
                partitions.map({ $0 == statuses.reduce(0) { $0 + $1.assignedPartitions } }) ?? true,
                ContinuousClock.now - since > .milliseconds(1_500)
            {
                return
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        var owned: [String] = []
        for worker in workers { owned.append("\(worker.name): \(await worker.status().map { "\($0.assignedPartitions)" } ?? "no status")") }
        throw ProcessFailure(description: "workers did not settle within \(timeout); partitions owned: \(owned.joined(separator: ", "))")
    }
}
