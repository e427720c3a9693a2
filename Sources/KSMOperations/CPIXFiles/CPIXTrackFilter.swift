import Speke

/// The `VideoFilter` and `AudioFilter` a usage rule of an exported document carries for an
/// `intendedTrackType`: the bounds of AWS's SPEKE v2 presets, which packagers reading CPIX files
/// (Unified Streaming, Shaka Packager) use to pick the key of each track.
///
/// | Name | Filter |
/// | --- | --- |
/// | `VIDEO`, `AUDIO` | video, audio, unbounded |
/// | `SD` | video, at most 442 368 pixels (768x576) |
/// | `HD`, `HD1`, `HD2` | video, 442 369...2 073 600, 442 369...921 600, 921 601...2 073 600 pixels |
/// | `UHD`, `UHD1`, `UHD2` | video, from 2 073 601, 2 073 601...8 847 360, from 8 847 361 pixels |
/// | `STEREO_AUDIO` | audio, at most 2 channels |
/// | `MULTICHANNEL_AUDIO`, `_3_6`, `_7` | audio, from 3, 3...6, from 7 channels |
/// | `ALL` | video and audio, unbounded (one key for every track) |
///
/// A `+`-joined name (`SD+HD1`) takes the span of its video parts and of its audio parts, as one
/// key protects every track its parts name. Other names are refused: an exported filter must mean
/// what the packager will read it to mean.
package struct CPIXTrackFilter: Sendable, Hashable {
    /// Pixel bounds of the video filter; nil when the track type names no video.
    package var video: ClosedBounds?
    /// Channel bounds of the audio filter; nil when the track type names no audio.
    package var audio: ClosedBounds?

    /// Inclusive bounds, nil where open.
    package struct ClosedBounds: Sendable, Hashable {
        /// The least value (`minPixels`, `minChannels`); nil when open.
        package var minimum: UInt64?
        /// The greatest value (`maxPixels`, `maxChannels`); nil when open.
        package var maximum: UInt64?

        package init(_ minimum: UInt64?, _ maximum: UInt64?) {
            self.minimum = minimum
            self.maximum = maximum
        }

        /// The smallest bounds holding both.
        func union(_ other: ClosedBounds?) -> ClosedBounds {
            guard let other else { return self }
            let low = minimum.flatMap { a in other.minimum.map { b in Swift.min(a, b) } }
            let high = maximum.flatMap { a in other.maximum.map { b in Swift.max(a, b) } }
            return ClosedBounds(low, high)
        }
    }

    /// The preset names and their filters, upper case.
    package static let presets: [String: CPIXTrackFilter] = [
        "VIDEO": CPIXTrackFilter(video: ClosedBounds(nil, nil)),
        "SD": CPIXTrackFilter(video: ClosedBounds(nil, 442_368)),
        "HD": CPIXTrackFilter(video: ClosedBounds(442_369, 2_073_600)),
        "HD1": CPIXTrackFilter(video: ClosedBounds(442_369, 921_600)),
        "HD2": CPIXTrackFilter(video: ClosedBounds(921_601, 2_073_600)),
        "UHD": CPIXTrackFilter(video: ClosedBounds(2_073_601, nil)),
        "UHD1": CPIXTrackFilter(video: ClosedBounds(2_073_601, 8_847_360)),
        "UHD2": CPIXTrackFilter(video: ClosedBounds(8_847_361, nil)),
        "AUDIO": CPIXTrackFilter(audio: ClosedBounds(nil, nil)),
        "STEREO_AUDIO": CPIXTrackFilter(audio: ClosedBounds(nil, 2)),
        "MULTICHANNEL_AUDIO": CPIXTrackFilter(audio: ClosedBounds(3, nil)),
        "MULTICHANNEL_AUDIO_3_6": CPIXTrackFilter(audio: ClosedBounds(3, 6)),
        "MULTICHANNEL_AUDIO_7": CPIXTrackFilter(audio: ClosedBounds(7, nil)),
        "ALL": CPIXTrackFilter(video: ClosedBounds(nil, nil), audio: ClosedBounds(nil, nil)),
    ]

    package init(video: ClosedBounds? = nil, audio: ClosedBounds? = nil) {
        self.video = video
        self.audio = audio
    }

    /// The filter of a track type: a preset name or `+`-joined preset names (`ALL` stands alone).
    /// - Throws: `.invalidArgument` naming the presets for any other name.
    package init(trackType: String) throws(CPIXFileError) {
        let parts = trackType.split(separator: "+", omittingEmptySubsequences: false).map(String.init)
        var video: ClosedBounds? = nil
        var audio: ClosedBounds? = nil
        for part in parts {
            guard let preset = Self.presets[part], part != "ALL" || parts.count == 1 else {
                let names = Self.presets.keys.sorted().joined(separator: ", ")
                throw CPIXFileError(.invalidArgument, "track type \(trackType.prefix(64)) is not one of \(names), or video and audio names joined by '+'")
            }
            if let v = preset.video { video = v.union(video) }
            if let a = preset.audio { audio = a.union(audio) }
        }
        self.init(video: video, audio: audio)
    }

    /// The filter elements of a `ContentKeyUsageRule`, video first (CPIX schema order).
    package var elements: [XMLElementValue] {
        var elements: [XMLElementValue] = []
        if let video {
            var element = XMLElementValue(CPIXNamespace.cpix, "VideoFilter")
            element.set(attribute: "minPixels", video.minimum.map(String.init))
            element.set(attribute: "maxPixels", video.maximum.map(String.init))
            elements.append(element)
        }
        if let audio {
            var element = XMLElementValue(CPIXNamespace.cpix, "AudioFilter")
            element.set(attribute: "minChannels", audio.minimum.map(String.init))
            element.set(attribute: "maxChannels", audio.maximum.map(String.init))
            elements.append(element)
        }
        return elements
    }
}
