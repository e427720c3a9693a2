import Foundation
import KSMOperations

extension WorkerStatus {
    /// The `/status` of the worker whose admin port is `port` on loopback; nil while it does not answer.
    package static func fetch(port: Int) async -> WorkerStatus? {
        guard let data = await LoopbackGet.body(port: port, path: "/status") else { return nil }
        return WorkerStatus(json: Array(data))
    }
}
