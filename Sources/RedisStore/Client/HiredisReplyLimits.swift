internal import CHiredis

/// hiredis's own reply object functions with one bound added: an array header longer than
/// ``maximumElements`` is refused before hiredis allocates it.
///
/// hiredis 0.14 allocates an array's element vector as soon as it reads the header: `*2147483647`
/// costs 16 GiB of address space at once, and freeing the unfinished array walks all 2^31 entries
/// (seconds of CPU) when the connection is dropped. The reply byte limit of ``HiredisContext``
/// cannot stop that, since the header is a dozen bytes. Every reader the client makes (contexts and
/// ``HiredisReader``) gets this table.
enum HiredisReplyLimits {
    /// The longest array a reply may hold: far above the store's longest (a `SCAN` page of 1000
    /// keys, the rotation index), and an 8 MiB element vector at most.
    static let maximumElements: Int32 = 1 << 20

    /// The reason hiredis reports when `createArray` declines (it calls every refusal "Out of
    /// memory"), for the error message.
    static var refusal: String { "an array longer than \(maximumElements) elements, or hiredis ran out of memory" }

    /// Points `reader` at the bounded table; false when the table could not be made (the reader
    /// then keeps hiredis's defaults).
    @discardableResult
    static func install(on reader: UnsafeMutablePointer<redisReader>) -> Bool {
        guard let table = boundedFunctions else { return false }
        reader.pointee.fn = table
        return true
    }

    /// hiredis's default `createArray`, read once from a reader hiredis made (the defaults are
    /// static in hiredis.c; a reader's `fn` points at them).
    private static let defaultCreateArray: (@convention(c) (UnsafePointer<redisReadTask>?, Int32) -> UnsafeMutableRawPointer?)? = {
        guard let reader = redisReaderCreate() else { return nil }
        defer { redisReaderFree(reader) }
        return reader.pointee.fn?.pointee.createArray
    }()

    /// A copy of the default table with `createArray` bounded; allocated once and never freed, since
    /// readers point at it for the life of the process. `nonisolated(unsafe)`: written once, by the
    /// lazy (thread-safe) initializer, and only read after that, by hiredis.
    nonisolated(unsafe) private static let boundedFunctions: UnsafeMutablePointer<redisReplyObjectFunctions>? = {
        guard let reader = redisReaderCreate() else { return nil }
        defer { redisReaderFree(reader) }
        guard let defaults = reader.pointee.fn, defaultCreateArray != nil else { return nil }
        let table = UnsafeMutablePointer<redisReplyObjectFunctions>.allocate(capacity: 1)
        table.initialize(to: defaults.pointee)
        table.pointee.createArray = { task, elements in
            // hiredis 0.14 has already refused counts below -1 or above INT_MAX.
            guard elements <= HiredisReplyLimits.maximumElements, let create = HiredisReplyLimits.defaultCreateArray else { return nil }
            return create(task, elements)
        }
        return table
    }()
}
