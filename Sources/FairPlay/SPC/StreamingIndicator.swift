/// Where the content will be shown, from the streaming indicator TLLV (guide table 2-5, corrected values).
package enum StreamingIndicator: Hashable, Sendable {
    /// The requesting device plays the content itself (any value but the two below).
    case device(UInt64)
    /// AirPlay to an Apple TV or an FPS-enabled TV or set-top box.
    case airPlay
    /// An Apple digital AV adapter; the HU then identifies the adapter, not the device.
    case avAdapter

    package static let airPlayValue: UInt64 = 0xabb0_256a_3184_3974
    package static let avAdapterValue: UInt64 = 0x5f9c_8132_b59f_2fde

    package init(rawValue: UInt64) {
        switch rawValue {
        case Self.airPlayValue: self = .airPlay
        case Self.avAdapterValue: self = .avAdapter
        default: self = .device(rawValue)
        }
    }

    package var rawValue: UInt64 {
        switch self {
        case .device(let v): v
        case .airPlay: Self.airPlayValue
        case .avAdapter: Self.avAdapterValue
        }
    }

    package var name: String {
        switch self {
        case .device: "device"
        case .airPlay: "airplay"
        case .avAdapter: "av-adapter"
        }
    }
}
