import Licensing

/// A SPEKE v2 key's `ContentKeyUsageRule@intendedTrackType` (`SD`, `HD`, `UHD1`, `AUDIO`,
/// `SD+HD1`, `ALL`, ...), and the FairPlay content type it gives the key, which selects Apple's
/// rules on the worker (security level, HDCP; ``AppleDefaultRules``).
///
/// The mapping (AWS's presets, docs/key-seeds.md "Keys for packagers"):
/// - `SD` → sd; `HD`, `HD1`, `HD2` → hd; `UHD`, `UHD1`, `UHD2` → uhd;
/// - `AUDIO`, `STEREO_AUDIO`, `MULTICHANNEL_AUDIO...` → audio;
/// - a `+`-joined name takes its strictest video part (`SD+HD1` → hd), since one key protects
///   every track it names; audio parts beside video parts change nothing, as an audio level would
///   let any client take the video key;
/// - `VIDEO`, `ALL` and names this table does not know give no type: the key protects tracks of
///   any resolution, so the tenant's policy decides (the worker refuses if no layer names one).
package struct IntendedTrackType: Sendable, Hashable, CustomStringConvertible {
    /// The name as the packager sent it.
    package let value: String

    /// The longest name accepted, in UTF-8 bytes.
    package static let maximumLength = 64

    /// Accepts 1...64 bytes of printable ASCII (no spaces), as every preset name is.
    package init(_ value: String) throws(PackagerKeyIssuerError) {
        let utf8 = value.utf8
        guard !utf8.isEmpty, utf8.count <= Self.maximumLength, utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw PackagerKeyIssuerError(.invalidRequest, "intended track type is not 1...\(Self.maximumLength) printable ASCII characters")
        }
        self.value = value
    }

    package var description: String { value }

    /// The content type the key's policy names; nil leaves it to the tenant's policy.
    package var contentType: ContentType? {
        var video: ContentType? = nil
        var audio = false
        for part in value.uppercased().split(separator: "+", omittingEmptySubsequences: false) {
            switch part {
            case "SD": video = Self.stricter(video, .sd)
            case "HD", "HD1", "HD2": video = Self.stricter(video, .hd)
            case "UHD", "UHD1", "UHD2": video = Self.stricter(video, .uhd)
            case "AUDIO", "STEREO_AUDIO": audio = true
            case _ where part.hasPrefix("MULTICHANNEL_AUDIO"): audio = true
            default: return nil
            }
        }
        return video ?? (audio ? .audio : nil)
    }

    private static func rank(_ type: ContentType) -> Int {
        switch type {
        case .audio: 0
        case .sd: 1
        case .hd: 2
        case .uhd: 3
        }
    }

    private static func stricter(_ a: ContentType?, _ b: ContentType) -> ContentType {
        guard let a else { return b }
        return rank(a) >= rank(b) ? a : b
    }
}
