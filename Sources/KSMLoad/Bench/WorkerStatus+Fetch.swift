import Foundation
import KSMOperations

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension WorkerStatus {
    /// The `/status` of the worker whose admin port is `port` on loopback; nil while it does not answer.
    package static func fetch(port: Int) async -> WorkerStatus? {
        guard let url = URL(string: "http://127.0.0.1:\(port)/status") else { return nil }
        // 2 s, not URLSession's 60 s: callers poll against deadlines of their own, and a worker that
        // stopped answering (killed, stopped) must not hold a poll past them.
        let request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 2)
        guard let (data, response) = try? await URLSession.shared.data(for: request), (response as? HTTPURLResponse)?.statusCode == 200
        else { return nil }
        return WorkerStatus(json: Array(data))
    }
}
