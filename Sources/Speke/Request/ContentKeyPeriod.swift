/// One `cpix:ContentKeyPeriod`: a crypto period of key rotation.
///
/// SPEKE v2.0 requires `id` and `index` and "uses only the `ContentKeyPeriod@index` to track the key
/// period"; SPEKE v2.1 (CPIX 2.4) may add, or send instead of the index, `start`/`end` (xs:dateTime,
/// live) or `startOffset`/`endOffset` (xs:duration, VOD). Times are kept as written: the key
/// provider echoes them and keys by KID, it does not compute with them.
package struct ContentKeyPeriod: Sendable, Hashable {
    package var id: String
    package var index: UInt64?
    package var start: String?
    package var end: String?
    package var startOffset: String?
    package var endOffset: String?

    package init(id: String, index: UInt64? = nil, start: String? = nil, end: String? = nil, startOffset: String? = nil, endOffset: String? = nil) {
        self.id = id
        self.index = index
        self.start = start
        self.end = end
        self.startOffset = startOffset
        self.endOffset = endOffset
    }
}
