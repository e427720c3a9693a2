/// The 8-byte key kind in the session-key version used TLLV: which session key encrypted the content key.
public struct SessionKeyKind: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// SK from [SK..R1]: every legacy and SDK 5 exchange.
    public static let generic = SessionKeyKind(rawValue: 0x182b_0bb9_f373_83d1)
    /// SDK 26's separate video session key, only available through Apple's library.
    public static let video = SessionKeyKind(rawValue: 0x02a6_9d25_f4b9_4c7c)
}
