/// A `cpix:VideoFilter` of a usage rule: which video tracks a key encrypts. Absent bounds are open.
/// (`wcg` is not read: SPEKE ignores it.)
package struct VideoFilter: Sendable, Hashable {
    package var minPixels: UInt64?
    package var maxPixels: UInt64?
    package var hdr: Bool?
    package var minFps: UInt64?
    package var maxFps: UInt64?

    package init(minPixels: UInt64? = nil, maxPixels: UInt64? = nil, hdr: Bool? = nil, minFps: UInt64? = nil, maxFps: UInt64? = nil) {
        self.minPixels = minPixels
        self.maxPixels = maxPixels
        self.hdr = hdr
        self.minFps = minFps
        self.maxFps = maxFps
    }
}
