/// A child of a request's `cpix:DRMSystem`: what the encryptor asks the key provider to fill.
package enum SignalingElement: String, Sendable, Hashable, CaseIterable {
    /// `cpix:PSSH`: an ISO-BMFF `pssh` box (not FairPlay's).
    case pssh = "PSSH"
    /// `cpix:ContentProtectionData`: a DASH `ContentProtection` descriptor (not FairPlay's).
    case contentProtectionData = "ContentProtectionData"
    /// `cpix:URIExtXKey`: the `EXT-X-KEY` URI, base64 (CPIX 2.3; deprecated by SPEKE v2).
    case uriExtXKey = "URIExtXKey"
    /// `cpix:HLSSignalingData`: a whole HLS tag, base64, per playlist.
    case hlsSignalingData = "HLSSignalingData"
    /// `cpix:SmoothStreamingProtectionHeaderData` (PlayReady).
    case smoothStreamingProtectionHeaderData = "SmoothStreamingProtectionHeaderData"
    /// `cpix:HDSSignalingData` (Adobe HDS; CPIX 2.3 only).
    case hdsSignalingData = "HDSSignalingData"
    /// `speke:KeyFormat`, `speke:KeyFormatVersions`, `speke:ProtectionHeader`: SPEKE v1 only.
    case spekeV1 = "speke"
}
