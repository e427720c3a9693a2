import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KSMOperations

extension WorkerStatus {
    /// The `/status` of the worker whose admin port is `port` on loopback; nil while it does not answer.
    package static func fetch(port: Int) async -> WorkerStatus? {
        guard let url = URL(string: "http://127.0.0.1:\(port)/status"),
              let (data, response) = try? await URLSession.shared.data(from: url), (response as? HTTPURLResponse)?.statusCode == 200
        else { return nil }
        return WorkerStatus(json: Array(data))
    }
}
