/// The 8-byte key kind in the session-key version used TLLV: which session key encrypted the content key.
package struct SessionKeyKind: RawRepresentable, Hashable, Sendable {
    package let rawValue: UInt64
    package init(rawValue: UInt64) { self.rawValue = rawValue }

    /// SK from [SK..R1]: every legacy and SDK 5 exchange.
    package static let generic = SessionKeyKind(rawValue: 0x182b_0bb9_f373_83d1)
    /// SDK 26's separate video session key, only available through Apple's library.
    package static let video = SessionKeyKind(rawValue: 0x02a6_9d25_f4b9_4c7c)
}
