/// A FairPlay security level (guide tables 3-8 and 3-10). Ordered audio < baseline < main.
public struct SecurityLevel: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let audio = SecurityLevel(rawValue: 0x17d9_9d57_4eed_567d)
    public static let baseline = SecurityLevel(rawValue: 0x32f0_0049_66a5_c4f8)
    public static let main = SecurityLevel(rawValue: 0x4e7f_d924_21d5_88b4)

    /// Rank for comparison; an unknown level ranks below audio so it never satisfies a requirement.
    public var rank: Int {
        switch self {
        case .audio: 1
        case .baseline: 2
        case .main: 3
        default: 0
        }
    }

    public static func < (lhs: SecurityLevel, rhs: SecurityLevel) -> Bool { lhs.rank < rhs.rank }

    public var name: String {
        switch self {
        case .audio: "audio"
        case .baseline: "baseline"
        case .main: "main"
        default: "unknown"
        }
    }

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

/// The security level report TLLV (guide table 3-7).
public struct SecurityLevelReport: Hashable, Sendable {
    public var version: UInt32
    public var level: SecurityLevel
    /// The Kext Deny List version; the KDL TLLV, when present, takes precedence.
    public var kdlVersion: UInt32

    public init(version: UInt32 = 1, level: SecurityLevel, kdlVersion: UInt32) {
        self.version = version
        self.level = level
        self.kdlVersion = kdlVersion
    }
}
