/// The HDCP level in an HDCP enforcement TLLV (guide table 3-13). Without the TLLV a device enforces type 0.
public struct HDCPRequirement: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let notRequired = HDCPRequirement(rawValue: 0xEF72_894C_A789_5B78)
    public static let type0 = HDCPRequirement(rawValue: 0x4079_1AC7_8BD5_C571)
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
