/// One `cpix:ContentKeyUsageRule`: a clause of the encryption contract (which tracks a key encrypts).
package struct ContentKeyUsageRule: Sendable, Hashable {
    package var kid: KID
    /// `intendedTrackType`: a preset key name (`VIDEO`, `AUDIO`, `SD`, `HD1`, `SD+HD1`, `ALL`, ...).
    package var intendedTrackType: String
    /// The `KeyPeriodFilter@periodId`s, each naming a ``ContentKeyPeriod``.
    package var periodIDs: [String]
    package var videoFilters: [VideoFilter]
    package var audioFilters: [AudioFilter]

    package init(kid: KID, intendedTrackType: String, periodIDs: [String] = [], videoFilters: [VideoFilter] = [], audioFilters: [AudioFilter] = []) {
        self.kid = kid
        self.intendedTrackType = intendedTrackType
        self.periodIDs = periodIDs
        self.videoFilters = videoFilters
        self.audioFilters = audioFilters
    }
}
