/// The content key duration TLLV (guide table 4-3; persistable types from table 5-1).
public struct ContentKeyDuration: Hashable, Sendable {
    /// The lease's length in seconds (lease types); 0 for the other types.
    public var leaseSeconds: UInt32
    /// The rental's length in seconds (rental types), or how long a persistable limited key may be
    /// kept; 0 where the type has no such limit.
    public var rentalSeconds: UInt32
    /// Which durations apply and whether the device may persist the key.
    public var keyType: KeyType
    /// The guide and SDK 26 put 0x86d34a3a here; Apple's SDK 2.0.3 CKCs put 0. The client ignores it.
    public var reserved: UInt32

    /// The reserved value the guide and Apple's SDK 26 write, and the default of ``reserved``.
    public static let guideReservedValue: UInt32 = 0x86d3_4a3a

    /// Creates a duration TLLV from its four fields; the static factories below cover the usual types.
    public init(leaseSeconds: UInt32, rentalSeconds: UInt32, keyType: KeyType, reserved: UInt32 = ContentKeyDuration.guideReservedValue) {
        self.leaseSeconds = leaseSeconds
        self.rentalSeconds = rentalSeconds
        self.keyType = keyType
        self.reserved = reserved
    }

    /// A lease of `seconds`, with no rental limit.
    public static func lease(_ seconds: UInt32) -> ContentKeyDuration { .init(leaseSeconds: seconds, rentalSeconds: 0, keyType: .lease) }
    /// A rental of `seconds`, with no lease.
    public static func rental(_ seconds: UInt32) -> ContentKeyDuration { .init(leaseSeconds: 0, rentalSeconds: seconds, keyType: .rental) }
    /// A lease of `lease` seconds within a rental of `rental` seconds; the key ends with whichever
    /// runs out first.
    public static func leaseAndRental(lease: UInt32, rental: UInt32) -> ContentKeyDuration {
        .init(leaseSeconds: lease, rentalSeconds: rental, keyType: .leaseAndRental)
    }
    /// A key the device may persist with no expiry.
    public static let persistableUnlimited = ContentKeyDuration(leaseSeconds: 0, rentalSeconds: 0, keyType: .persistableUnlimited)
    /// A key the device may persist for `seconds`.
    public static func persistable(limitedTo seconds: UInt32) -> ContentKeyDuration {
        .init(leaseSeconds: 0, rentalSeconds: seconds, keyType: .persistableLimited)
    }

    var encoded: [UInt8] {
        var v: [UInt8] = []
        v.reserveCapacity(16)
        v.appendBigEndian(leaseSeconds)
        v.appendBigEndian(rentalSeconds)
        v.appendBigEndian(keyType.rawValue)
        v.appendBigEndian(reserved)
        return v
    }

    /// A key type of the content key duration TLLV.
    public struct KeyType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The 32-bit value the TLLV carries.
        public let rawValue: UInt32
        /// Wraps a raw key type; a value the guide does not define is kept and printed as `unknown(0x…)`.
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// Limited by ``ContentKeyDuration/leaseSeconds`` only.
        public static let lease = KeyType(rawValue: 0x1a4b_de7e)
        /// Limited by ``ContentKeyDuration/rentalSeconds`` only.
        public static let rental = KeyType(rawValue: 0x3dfe_45a0)
        /// Limited by both the lease and the rental.
        public static let leaseAndRental = KeyType(rawValue: 0x27b5_9bde)
        /// A key the device may store and use with no expiry.
        public static let persistableUnlimited = KeyType(rawValue: 0x3df2_d9fb)
        /// A key the device may store for ``ContentKeyDuration/rentalSeconds``.
        public static let persistableLimited = KeyType(rawValue: 0x18f0_6048)

        /// Lease types bind the key to a playback session, so they need a media playback state TLLV.
        public var isLease: Bool { self == .lease || self == .leaseAndRental }

        public var description: String {
            switch self {
            case .lease: "lease"
            case .rental: "rental"
            case .leaseAndRental: "lease-and-rental"
            case .persistableUnlimited: "persistable-unlimited"
            case .persistableLimited: "persistable-limited"
            default: "unknown(0x\(String(rawValue, radix: 16)))"
            }
        }
    }
}
