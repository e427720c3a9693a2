/// The HDCP level in an HDCP enforcement TLLV (guide table 3-13). Without the TLLV a device enforces type 0.
public struct HDCPRequirement: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The 64-bit value the HDCP enforcement TLLV carries.
    public let rawValue: UInt64
    /// Wraps a raw value; one the guide does not define is kept and printed as `unknown(0x…)`.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The content may play without HDCP (Apple's JSON `hdcp-type` -1).
    public static let notRequired = HDCPRequirement(rawValue: 0xEF72_894C_A789_5B78)
    /// HDCP type 0 (any HDCP version): the default of Apple's JSON and of a device without the TLLV.
    public static let type0 = HDCPRequirement(rawValue: 0x4079_1AC7_8BD5_C571)
    /// HDCP type 1 (HDCP 2.2 or later).
    public static let type1 = HDCPRequirement(rawValue: 0x285A_0863_BBA8_E1D3)

    /// Apple's JSON `hdcp-type`: -1 none, 0 type 0, 1 type 1.
    public init?(hdcpType: Int) {
        switch hdcpType {
        case -1: self = .notRequired
        case 0: self = .type0
        case 1: self = .type1
        default: return nil
        }
    }

    /// Apple's JSON `hdcp-type` for this level (-1, 0 or 1); nil for a value the guide does not define.
    public var hdcpType: Int? {
        switch self {
        case .notRequired: -1
        case .type0: 0
        case .type1: 1
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .notRequired: "none"
        case .type0: "type-0"
        case .type1: "type-1"
        default: "unknown(0x\(String(rawValue, radix: 16)))"
        }
    }
}
