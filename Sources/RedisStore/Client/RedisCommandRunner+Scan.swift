extension RedisCommandRunner {
    /// Walks the keys matching `pattern` on every master (one Redis is its own master), a `SCAN`
    /// page at a time, handing each non-empty page to `page` with the node that holds those keys.
    /// `page` returns true to stop; the result says whether it did.
    func scanEveryMaster(
        match pattern: RedisArgument, _ page: (RedisClient, [[UInt8]]) async throws(RedisError) -> Bool
    ) async throws(RedisError) -> Bool {
        for node in try await masterClients() {
            var cursor = "0"
            repeat {
                let reply = try await node.send(["SCAN", RedisArgument(cursor), "MATCH", pattern, "COUNT", "1000"])
                guard case .array(let parts) = reply, parts.count == 2, let next = parts[0].bytes, case .array(let keys) = parts[1] else {
                    throw RedisError(.unexpectedReply, "SCAN answered neither a cursor nor a key page", isRetriable: false)
                }
                cursor = String(decoding: next, as: UTF8.self)
                let names = keys.compactMap(\.bytes)
                if !names.isEmpty, try await page(node, names) { return true }
            } while cursor != "0"
        }
        return false
    }
}
