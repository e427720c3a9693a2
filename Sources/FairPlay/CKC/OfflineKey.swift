/// The offline key TLLV (guide table 6-1): dual expiry for downloaded rentals.
///
/// Version 2 adds a title ID shared by all streams of a program (SDK 26 `populateTagServerOfflineKey`
/// sends it whenever a stream or title ID is given, version 1 with a zero content ID otherwise).
/// Only clients with capability bit 3 receive the TLLV at all, and only with a media playback state:
/// `delivery(capabilities:hasPlaybackState:)`. Never in the same CKC as a content key duration TLLV
/// (the client rejects it).
public struct OfflineKey: Hashable, Sendable {
    /// 1 or 2.
    public var version: UInt32
    /// Content ID (version 1) or stream ID (version 2): 16 bytes the device reports back in a sync SPC.
    public var contentID: [UInt8]
    /// Seconds the key stays valid before playback starts, from acquisition; 0 means no limit.
    public var storageDuration: UInt32
    /// Seconds the key stays valid after the first playback; 0 means no limit.
    public var playbackDuration: UInt32
    /// Version 2 only: 16 bytes common to all streams of one title.
    public var titleID: [UInt8]?

    /// Creates offline terms; the content ID (and title ID, when given) must be 16 bytes, which building
    /// the CKC checks.
    /// - Parameters:
    ///   - version: 1, or 2 to send `titleID`.
    ///   - contentID: The content (version 1) or stream (version 2) ID, 16 bytes.
    ///   - storageDuration: Seconds valid before the first playback; 0 for no limit.
    ///   - playbackDuration: Seconds valid after the first playback; 0 for no limit.
    ///   - titleID: The 16-byte title ID of a version 2 key.
    public init(version: UInt32, contentID: [UInt8], storageDuration: UInt32, playbackDuration: UInt32, titleID: [UInt8]? = nil) {
        self.version = version
        self.contentID = contentID
        self.storageDuration = storageDuration
        self.playbackDuration = playbackDuration
        self.titleID = titleID
    }

    /// How a CKC carries these terms to a client (``OfflineDelivery``, SDK 26 `populateTagsCustom`).
    package func delivery(capabilities: Capabilities?, hasPlaybackState: Bool) -> OfflineDelivery {
        OfflineDelivery(storageSeconds: storageDuration, playbackSeconds: playbackDuration, capabilities: capabilities, hasPlaybackState: hasPlaybackState)
    }

    func encoded() throws(FairPlayError) -> [UInt8] {
        guard contentID.count == 16 else { throw .param("offline key content/stream ID must be 16 bytes, got \(contentID.count)") }
        var v: [UInt8] = []
        v.reserveCapacity(48)
        v.appendBigEndian(version)
        v.appendBigEndian(UInt32(0))
        v.append(contentsOf: contentID)
        v.appendBigEndian(storageDuration)
        v.appendBigEndian(playbackDuration)
        switch version {
        case 1:
            guard titleID == nil else { throw .param("offline key version 1 has no title ID") }
        case 2:
            guard let titleID, titleID.count == 16 else { throw .param("offline key version 2 needs a 16-byte title ID") }
            v.append(contentsOf: titleID)
        default:
            throw .param("offline key version \(version) is not 1 or 2")
        }
        return v
    }
}
