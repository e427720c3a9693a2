extension RedisCommandRunner {
    /// How many `SCAN` pages one master may answer before the walk gives up: a real cursor comes
    /// back to 0 after about (hash table buckets / 1000) pages, so 2^22 pages cover a table of four
    /// billion buckets, while a server that never answers 0 cannot keep the walk going for ever.
    static var maximumScanPages: Int { 1 << 22 }

    /// Walks the keys matching `pattern` on every master (one Redis is its own master), a `SCAN`
    /// page at a time, handing each non-empty page to `page` with the node that holds those keys.
    /// `page` returns true to stop; the result says whether it did.
    /// - Throws: `.unexpectedReply` for a page that is not `[cursor, [keys...]]` with a decimal
    ///   cursor, or a walk past `maximumPages` (default ``maximumScanPages``) pages on one master.
    func scanEveryMaster(
        match pattern: RedisArgument, maximumPages: Int = Self.maximumScanPages, _ page: (RedisClient, [[UInt8]]) async throws(RedisError) -> Bool
    ) async throws(RedisError) -> Bool {
        for node in try await masterClients() {
            var cursor: UInt64 = 0
            var pages = 0
            repeat {
                pages += 1
                guard pages <= maximumPages else {
                    throw RedisError(.unexpectedReply, "SCAN did not finish within \(maximumPages) pages", isRetriable: false)
                }
                let reply = try await node.send(["SCAN", RedisArgument(String(cursor)), "MATCH", pattern, "COUNT", "1000"])
                guard case .array(let parts) = reply, parts.count == 2, let next = parts[0].bytes, case .array(let keys) = parts[1] else {
                    throw RedisError(.unexpectedReply, "SCAN answered neither a cursor nor a key page", isRetriable: false)
                }
                // Redis's cursor is an unsigned 64-bit number written in decimal.
                guard let number = UInt64(String(decoding: next, as: UTF8.self)) else {
                    throw RedisError(.unexpectedReply, "SCAN answered a cursor that is not a decimal number", isRetriable: false)
                }
                cursor = number
                let names = keys.compactMap(\.bytes)
                if !names.isEmpty, try await page(node, names) { return true }
            } while cursor != 0
        }
        return false
    }
}
