/// The playback state in a media playback state TLLV (guide table 4-2).
package struct PlaybackState: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// State 1: ready to start; the CKC must carry a valid content key.
    package static let readyToPlay = PlaybackState(rawValue: 0xf4de_e5a2)
    /// State 2: playing or paused; the CKC needs a duration answer but not a valid key.
    package static let playingOrPaused = PlaybackState(rawValue: 0xa5d6_739e)
    /// State 3: playing with the lease about to expire; the CKC renews it with a valid key.
    package static let leaseRenewal = PlaybackState(rawValue: 0x4f83_4330)

    /// The player stopped the session (current clients send it; Apple's SDK 26 issues a CKC for it
    /// as for any state it does not name).
    package static let sessionStopped = PlaybackState(rawValue: 0x5991_bf20)

    /// 1, 2 or 3 for the guide's states; nil for any other value.
    package var number: Int? {
        switch self {
        case .readyToPlay: 1
        case .playingOrPaused: 2
        case .leaseRenewal: 3
        default: nil
        }
    }

    package var description: String {
        if self == .sessionStopped { return "session stopped" }
        return number.map { "state \($0)" } ?? "unknown(0x\(String(rawValue, radix: 16)))"
    }
}

/// The media playback state TLLV (guide table 4-1).
package struct MediaPlaybackInfo: Hashable, Sendable {
    /// Seconds since 1970 when the device made the SPC.
    package var creationDate: UInt32
    package var state: PlaybackState
    /// Identifies one playback of one title, across bit rates and keys; new when the user reopens it.
    package var sessionID: UInt64

    package init(creationDate: UInt32, state: PlaybackState, sessionID: UInt64) {
        self.creationDate = creationDate
        self.state = state
        self.sessionID = sessionID
    }
}
