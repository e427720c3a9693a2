/// The HLS tags FairPlay content is signaled with, as SPEKE's `HLSSignalingData` carries them.
///
/// MediaPackage's SPEKE v2 guide: media and multivariant tags are "identical except tag name",
/// `METHOD=SAMPLE-AES`, `KEYFORMAT="com.apple.streamingkeydelivery"`, `KEYFORMATVERSIONS="1"`, no
/// `SCHEME` and no `IV` attribute (FairPlay delivers the IV in the CKC). One line, no line
/// terminator: the encryptor inserts the tag into its playlist itself.
package enum HLSSignaling {
    package static let keyFormat = "com.apple.streamingkeydelivery"

    /// The tag for `playlist`: `#EXT-X-KEY:...` for media, `#EXT-X-SESSION-KEY:...` for the
    /// multivariant playlist.
    package static func tag(for playlist: HLSPlaylist, skdURI: String) -> String {
        "\(playlist.tag):METHOD=SAMPLE-AES,URI=\"\(skdURI)\",KEYFORMAT=\"\(keyFormat)\",KEYFORMATVERSIONS=\"1\""
    }
}
