/// A `cpix:AudioFilter` of a usage rule: which audio tracks a key encrypts. Absent bounds are open.
package struct AudioFilter: Sendable, Hashable {
    package var minChannels: UInt64?
    package var maxChannels: UInt64?

    package init(minChannels: UInt64? = nil, maxChannels: UInt64? = nil) {
        self.minChannels = minChannels
        self.maxChannels = maxChannels
    }
}
