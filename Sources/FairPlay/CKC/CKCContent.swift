/// What a CKC should grant: the content key and the terms that travel with it.
public struct CKCContent: Sendable {
    /// The 16-byte content key. Nil only for playback state 2, which needs a duration answer but no valid key.
    public var contentKey: [UInt8]?
    /// The 16-byte IV the media was encrypted with.
    public var contentIV: [UInt8]
    /// Sent only to an SPC with a media playback state TLLV, as Apple's SDK 26 does.
    public var keyDuration: ContentKeyDuration?
    /// Sent as the offline key TLLV to clients with capability bit 3, and to others as a content key
    /// duration TLLV of a persistable type; only with a playback state (`OfflineDelivery`).
    public var offlineKey: OfflineKey?
    /// Always sent, as SDK 26 always sends the HDCP TLLV; Apple's JSON default is type 0.
    public var hdcp: HDCPRequirement
    /// Always sent, as SDK 26 always sends the required security level TLLV.
    public var requiredSecurityLevel: SecurityLevel
    /// For Apple's library: 0 unknown, 1 video, 3 audio.
    public var libraryContentType: UInt64
    /// How the media is encrypted. Only Apple's SDK 26 library reads it: with cbcs video (and an SPC
    /// carrying [SK..R1] v3 and R2 v3) it may use the video session key. Nil: not stated, which never
    /// asks for the video key.
    public var encryptionScheme: EncryptionScheme?

    /// Creates the terms of one CKC. The defaults follow Apple's SDK 26: HDCP type 0, baseline security
    /// level, video content, no duration, offline key or encryption scheme.
    /// - Parameters:
    ///   - contentKey: The 16-byte content key; nil only for playback state 2.
    ///   - contentIV: The 16-byte IV the media was encrypted with.
    ///   - keyDuration: The content key duration TLLV to send when the SPC has a playback state.
    ///   - offlineKey: Offline (download) terms, sent only with a playback state.
    ///   - hdcp: The HDCP level the device must enforce.
    ///   - requiredSecurityLevel: The lowest client security level allowed to play the content.
    ///   - libraryContentType: 0 unknown, 1 video, 3 audio (read by Apple's library only).
    ///   - encryptionScheme: How the media is encrypted; nil when not stated.
    public init(
        contentKey: [UInt8]?, contentIV: [UInt8], keyDuration: ContentKeyDuration? = nil, offlineKey: OfflineKey? = nil, hdcp: HDCPRequirement = .type0,
        requiredSecurityLevel: SecurityLevel = .baseline, libraryContentType: UInt64 = 1, encryptionScheme: EncryptionScheme? = nil
    ) {
        self.contentKey = contentKey
        self.contentIV = contentIV
        self.keyDuration = keyDuration
        self.offlineKey = offlineKey
        self.hdcp = hdcp
        self.requiredSecurityLevel = requiredSecurityLevel
        self.libraryContentType = libraryContentType
        self.encryptionScheme = encryptionScheme
    }
}
