import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A GET to a child process's port on loopback, the benches' machine channel to the processes they
/// start (a worker's `/status`, an edge's or a worker's `/metrics`).
package enum LoopbackGet {
    /// The body of `path` on loopback `port`; nil unless it answers 200 within 2 s. 2 s, not
    /// URLSession's 60 s: callers poll against deadlines of their own, and a process that stopped
    /// answering (killed, stopped) must not hold a poll past them.
    package static func body(port: Int, path: String) async -> Data? {
        guard let url = URL(string: "http://127.0.0.1:\(port)\(path)") else { return nil }
        let request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 2)
        guard let (data, response) = try? await URLSession.shared.data(for: request), (response as? HTTPURLResponse)?.statusCode == 200
        else { return nil }
        return data
    }
}
