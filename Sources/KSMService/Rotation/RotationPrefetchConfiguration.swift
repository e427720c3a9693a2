/// When and how far ahead a worker's rotation prefetcher looks.
package struct RotationPrefetchConfiguration: Sendable, Hashable {
    /// How far before a boundary the next key is read, and the horizon of the expected load.
    /// Default: 30 s (a few playlist refreshes: players fetch the next key when it appears).
    package var leadTime: Duration = .seconds(30)
    /// Time between passes. Each pass re-reads every due key, so this is also how fast a key or
    /// policy changed in Redis reaches a held entry. Default: 5 s.
    package var interval: Duration = .seconds(5)
    /// How long after its boundary a prefetched key stays held in the cache: the storm's length
    /// plus stragglers. Default: 15 s.
    package var holdAfterBoundary: Duration = .seconds(15)

    package init(leadTime: Duration = .seconds(30), interval: Duration = .seconds(5), holdAfterBoundary: Duration = .seconds(15)) {
        self.leadTime = leadTime
        self.interval = interval
        self.holdAfterBoundary = holdAfterBoundary
    }
}
