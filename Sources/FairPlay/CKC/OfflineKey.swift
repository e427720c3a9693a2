/// The offline key TLLV (guide table 6-1): dual expiry for downloaded rentals.
///
/// Version 2 adds a title ID shared by all streams of a program; send it only to clients with
/// capability bit 3. Never in the same CKC as a content key duration TLLV (the client rejects it).
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

    public init(version: UInt32, contentID: [UInt8], storageDuration: UInt32, playbackDuration: UInt32, titleID: [UInt8]? = nil) {
        self.version = version
        self.contentID = contentID
        self.storageDuration = storageDuration
        self.playbackDuration = playbackDuration
        self.titleID = titleID
    }

    /// Version 2 for clients that announce it (capability bit 3), version 1 otherwise. Only bit-3
    /// clients receive the TLLV at all (SDK 26); others get `persistableDuration`.
    public static func make(for capabilities: Capabilities?, streamID: [UInt8], titleID: [UInt8], storageDuration: UInt32, playbackDuration: UInt32) -> OfflineKey {
        if capabilities?.offlineKeyV2 == true {
            return OfflineKey(version: 2, contentID: streamID, storageDuration: storageDuration, playbackDuration: playbackDuration, titleID: titleID)
        }
        return OfflineKey(version: 1, contentID: streamID, storageDuration: storageDuration, playbackDuration: playbackDuration)
    }

    /// The same terms as a content key duration, for a client that reads no offline key TLLV (SDK 26
    /// sends `persistenceAndDuration` when either duration is set, `persistence` otherwise).
    public var persistableDuration: ContentKeyDuration {
        let limited = storageDuration != 0 || playbackDuration != 0
        return ContentKeyDuration(leaseSeconds: 0, rentalSeconds: storageDuration, keyType: limited ? .persistableLimited : .persistableUnlimited)
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
