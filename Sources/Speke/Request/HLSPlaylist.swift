/// `HLSSignalingData@playlist`: which playlist the signaling goes into, spelled as the request spelled it.
///
/// CPIX 2.3 and AWS's SPEKE v2.0 pages write `master`; CPIX 2.4 renamed it `multiVariant`, and
/// which spelling an encryptor sends under SPEKE v2.1 is not published. Both are accepted and the
/// answer repeats the request's spelling, so the encryptor finds the element it asked for.
package enum HLSPlaylist: String, Sendable, Hashable, CaseIterable {
    /// The media playlist: the signaling is an `#EXT-X-KEY` tag.
    case media
    /// The multivariant playlist, CPIX 2.3 spelling: an `#EXT-X-SESSION-KEY` tag.
    case master
    /// The multivariant playlist, CPIX 2.4 spelling: an `#EXT-X-SESSION-KEY` tag.
    case multiVariant

    /// The HLS tag this playlist's signaling carries.
    package var tag: String {
        switch self {
        case .media: "#EXT-X-KEY"
        case .master, .multiVariant: "#EXT-X-SESSION-KEY"
        }
    }
}
