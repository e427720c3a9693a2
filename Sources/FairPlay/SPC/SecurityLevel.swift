/// A FairPlay security level (guide tables 3-8 and 3-10). Ordered by raw value, as Apple's SDK 26
/// compares them: audio < baseline < main, and an unknown value wherever its number falls.
public struct SecurityLevel: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 64-bit value the TLLVs carry; also the order levels compare in.
    public let rawValue: UInt64
    /// Wraps a raw value; one Apple does not define keeps its place in the order and is named `unknown`.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Audio-only clients; content that requires audio plays on any client.
    public static let audio = SecurityLevel(rawValue: 0x17d9_9d57_4eed_567d)
    /// Apple's baseline level (`AppleBaseline`): the default a CKC requires.
    public static let baseline = SecurityLevel(rawValue: 0x32f0_0049_66a5_c4f8)
    /// Apple's main level (`AppleMain`), above baseline.
    public static let main = SecurityLevel(rawValue: 0x4e7f_d924_21d5_88b4)

    /// 1 audio, 2 baseline, 3 main, 0 for a value Apple does not define.
    public var rank: Int {
        switch self {
        case .audio: 1
        case .baseline: 2
        case .main: 3
        default: 0
        }
    }

    public static func < (lhs: SecurityLevel, rhs: SecurityLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// True when a client at this level may get content that requires `required`: always for
    /// audio, otherwise this level is at least `required` (SDK 26's rule; an unknown level can rank
    /// below audio, so the audio exemption must not be left to the comparison).
    public func satisfies(_ required: SecurityLevel) -> Bool {
        required == .audio || self >= required
    }

    /// The lower-case name used in configuration and logs: `audio`, `baseline`, `main` or `unknown`.
    public var name: String {
        switch self {
        case .audio: "audio"
        case .baseline: "baseline"
        case .main: "main"
        default: "unknown"
        }
    }

    /// The level a name denotes, case-insensitively; accepts Apple's `AppleBaseline` and `AppleMain` too.
    /// Nil for any other name.
    public init?(name: String) {
        switch name.lowercased() {
        case "audio": self = .audio
        case "baseline", "applebaseline": self = .baseline
        case "main", "applemain": self = .main
        default: return nil
        }
    }

    public var description: String { name }
}

/// The plaintext (version 1) security level report TLLV (guide table 3-7): version, reserved 0,
/// 8-byte level, 4-byte KDL version. Current devices send a 32-byte encrypted form instead, which
/// Apple's SDK 26 ignores.
public struct SecurityLevelReport: Hashable, Sendable {
    /// The size of the encrypted report's value; SDK 26 skips a report of exactly this size.
    public static let encryptedLength = 32

    /// The report's version; 1 for the plaintext form.
    public var version: UInt32
    /// The level the client claims.
    public var level: SecurityLevel
    /// The Kext Deny List version; the KDL TLLV, when present, takes precedence.
    public var kdlVersion: UInt32

    /// Creates a plaintext report, version 1 by default.
    public init(version: UInt32 = 1, level: SecurityLevel, kdlVersion: UInt32) {
        self.version = version
        self.level = level
        self.kdlVersion = kdlVersion
    }
}
