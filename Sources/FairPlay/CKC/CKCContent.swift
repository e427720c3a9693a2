/// What a CKC should grant: the content key and the terms that travel with it.
public struct CKCContent: Sendable {
    /// The 16-byte content key. Nil only for playback state 2, which needs a duration answer but no valid key.
    public var contentKey: [UInt8]?
    /// The 16-byte IV the media was encrypted with.
    public var contentIV: [UInt8]
    public var keyDuration: ContentKeyDuration?
    public var offlineKey: OfflineKey?
    /// Nil sends no HDCP TLLV, which the device reads as type 0.
    public var hdcp: HDCPRequirement?
    public var requiredSecurityLevel: SecurityLevel?
    /// For Apple's library: 0 unknown, 1 video, 3 audio.
    public var libraryContentType: UInt64
    /// How the media is encrypted. Only Apple's SDK 26 library reads it: with cbcs video (and an SPC
    /// carrying [SK..R1] v3 and R2 v3) it may use the video session key. Nil: not stated, which never
    /// asks for the video key.
    public var encryptionScheme: EncryptionScheme?

    public init(contentKey: [UInt8]?, contentIV: [UInt8], keyDuration: ContentKeyDuration? = nil, offlineKey: OfflineKey? = nil, hdcp: HDCPRequirement? = nil, requiredSecurityLevel: SecurityLevel? = nil, libraryContentType: UInt64 = 1, encryptionScheme: EncryptionScheme? = nil) {
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
