/// One key period of one track of a live stream, as a key provider saw it: where it sits in the
/// stream's order, when it starts and ends if the packager said so, and the asset ID of its key.
///
/// The provider keeps a short log of these per (tenant, content ID, track type) in the store
/// (``PackagerKeyStore/recordPeriod(_:tenant:contentID:trackType:)``), because a packager asks for
/// one period at a time and a rotation schedule needs two: the key viewers play now and the next.
package struct PackagerPeriodEntry: Sendable, Hashable {
    /// The period's place in the stream: `ContentKeyPeriod@index`, or its start in ms since 1970
    /// when the period has no index (SPEKE v2.1 `START_END_ONLY`). Orders the log; one entry per value.
    package var order: Int64
    /// When the period starts, ms since 1970 (`@start`); nil when the packager sent no times (SPEKE v2.0).
    package var startMilliseconds: Int64?
    /// When the period ends, ms since 1970 (`@end`); nil when not sent.
    package var endMilliseconds: Int64?
    /// The asset ID of this period's key for the track (the `skd://` URI's bytes).
    package var assetID: [UInt8]

    package init(order: Int64, startMilliseconds: Int64?, endMilliseconds: Int64?, assetID: [UInt8]) {
        self.order = order
        self.startMilliseconds = startMilliseconds
        self.endMilliseconds = endMilliseconds
        self.assetID = assetID
    }
}
