/// How the content is encrypted, as Apple's server JSON names it (`"encryption-scheme"` of an asset).
///
/// Only Apple's SDK 26 libfpscrypto reads it: the video session key is used only for cbcs content,
/// because the other schemes may encrypt slice headers, which must be decrypted with the generic key.
/// A struct with static members so a scheme can be added without breaking callers.
public struct EncryptionScheme: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The scheme's name in Apple's JSON, such as `"cbcs"`.
    public let rawValue: String
    /// Wraps any name without checking it; ``init(appleName:)`` accepts only the names SDK 26 knows.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// CBC with pattern encryption (`cbcs`): the only scheme for which Apple's library may use the video session key.
    public static let cbcs = EncryptionScheme(rawValue: "cbcs")
    /// CBC for MPEG-2 transport streams (`cbc-ts`).
    public static let cbcTS = EncryptionScheme(rawValue: "cbc-ts")
    /// Full-sample CBC (`cbc1`).
    public static let cbc1 = EncryptionScheme(rawValue: "cbc1")
    /// Common Encryption, counter mode, version 1 (`cenc-v1`).
    public static let cencV1 = EncryptionScheme(rawValue: "cenc-v1")
    /// Common Encryption, counter mode, version 2 (`cenc-v2`).
    public static let cencV2 = EncryptionScheme(rawValue: "cenc-v2")

    /// The schemes Apple's SDK 26 JSON accepts.
    public static let known: [EncryptionScheme] = [.cbcs, .cbcTS, .cbc1, .cencV1, .cencV2]

    /// The scheme Apple's JSON calls `name`; nil for a name SDK 26 does not know.
    public init?(appleName name: String) {
        guard let scheme = Self.known.first(where: { $0.rawValue == name }) else { return nil }
        self = scheme
    }

    public var description: String { rawValue }
}
